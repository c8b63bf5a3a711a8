/**
 * A light follower's polls (src/core/following/) against a real devnet endpoint over
 * HTTP and a real writer thread: every poll reports its failure the same way, whoever
 * asked for it (the timer, gossip's end of the first sync, a peer's header run), so
 * node_status's chain.last_error and endpoint health say the endpoint is down whichever
 * poll found it so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { EsploraClient } from '../../../src/chain/esplora-client.js';
import { ChainFollower } from '../../../src/core/following/follower.js';
import { startDevnetChain } from '../../../src/devnet/chain-server.js';
import { RpcClient, portTransport } from '../../../src/ipc/rpc.js';
import type { WriterApi, WriterEvents, WriterInit } from '../../../src/messages/writer.js';

test('the poll the end of the first peer sync asks for reports a failure as the timer\'s poll does', async () => {
  const devnet = await startDevnetChain({ initialBlocks: 3 });
  const dir = mkdtempSync(join(tmpdir(), 'svc-follow-'));
  const workerData: WriterInit = { dbPath: join(dir, 'db'), nodeId: 'n', maxPendingCalls: 1_000, logFilter: 'error', secrets: [] };
  const thread = new Worker(new URL('../../../src/writer/thread.js', import.meta.url), { workerData });
  const writer = new RpcClient<WriterApi, WriterEvents>(portTransport(thread));
  await new Promise<void>((resolve) => writer.on('ready', () => resolve()));
  // No retries: a refused connection fails the request at once.
  const chain = new EsploraClient({ baseUrl: devnet.url, retries: 0, budget: false });
  // The timer polls once at start, then not within the test.
  const follower = new ChainFollower(chain, writer, { pollIntervalS: 3600, startHeight: null, mode: 'light', hasPeers: true, onStatus: () => undefined });
  try {
    await follower.start();
    // Queued after the timer's first poll: both ended once it resolves.
    await follower.pollNow();
    assert.equal(follower.lastError, null, 'the endpoint answered the timer\'s poll');
    await devnet.close();
    follower.noteInitialSync();
    // Queued after the poll noteInitialSync asked for: that one has ended (and reported) when this one does.
    await assert.rejects(follower.pollNow());
    assert.notEqual(follower.lastError, null, 'the failure of the poll asked for at the first sync\'s end is reported');
  } finally {
    await follower.stop();
    await chain.close();
    await thread.terminate();
    await devnet.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
