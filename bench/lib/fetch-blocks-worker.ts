/**
 * Worker thread of the catch-up bench's ceiling: fetches and parses the given blocks
 * through the node's own EsploraClient (GET /block/:hash/raw, fully checked), as many at
 * once as the client's limit lets through, and posts the wall time. It runs on its own
 * thread so the devnet server (the bench's main thread) and the fetcher do not share one
 * event loop, as they do not when a node process catches up.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EsploraClient } from '../../src/chain/esplora-client.js';

export interface FetchBlocksJob {
  url: string;
  hashes: string[];
  /** The node's request budget in the same run (requests an hour, burst, connections). */
  budget: { requestsPerHour: number; burst: number; maxConcurrent: number };
}

const job = workerData as FetchBlocksJob;
// A new client per run: its cache would answer a second run without fetching.
const client = new EsploraClient({ baseUrl: job.url, budget: job.budget });
const t0 = performance.now();
let next = 0;
let txs = 0;
const lane = async (): Promise<void> => {
  while (next < job.hashes.length) {
    const b = await client.rawBlock(job.hashes[next++]!, { priority: 'tip' });
    txs += b.txs.length;
  }
};
await Promise.all(Array.from({ length: job.budget.maxConcurrent }, lane));
const ms = performance.now() - t0;
await client.close();
parentPort!.postMessage({ ms, txs });
