/**
 * SvcReader against a real node: field reads and call statuses verified by default (a
 * node lying about a value is caught, `verify: false` reads it as it is), events paged by
 * cursor, and the feed followed from a stored position through a node restart (its socket
 * dropped, reconnected with backoff) and a reorg (the rollback applied through the
 * callback): what the consumer holds is then exactly the node's event log, and a consumer
 * started again from its store gets only what came after.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { ClientError, memoryCursorStore, NodeClient, SvcReader, type FollowMessage, type SvcClient } from '@svc-node/client';
import type { Artifact } from '@svc-node/protocol/contract';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced, waitUntil } from '../helpers/devnet-node.js';

let devnet: DevnetChainHandle;
let node: NodeProcess;
let svc: SvcClient;
let artifact: Artifact;
let contractId = '';
let port = 0;
const dataDir = mkdtempSync(join(tmpdir(), 'svc-reader-'));
const wallet = testWallet(41);
let firstTxid = '';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}

const startOurNode = (): Promise<NodeProcess> => startDevnetNode(devnet, { dataDir, env: { SVC_REST_ADDRESS: `127.0.0.1:${port}` } });

/** `n` bump calls confirmed in one block; their txids. */
async function bumps(n: number): Promise<string[]> {
  const txids: string[] = [];
  for (let i = 0; i < n; i++) txids.push((await svc.call({ contractId, function: 'bump', args: [`u64:${i + 1}`], abi: artifact.abi })).anchor.txid);
  devnet.chain.mine(1, txids);
  await waitSynced(node, devnet);
  return txids;
}

before(async () => {
  devnet = await startDevnet();
  port = await freePort();
  node = await startOurNode();
  await fund(devnet, wallet, 12);
  await waitSynced(node, devnet);
  svc = client(node, devnet, wallet);
  artifact = compileFixture('counter.svc');
  contractId = (await svc.deploy(artifact)).contractId;
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  [firstTxid] = await bumps(5);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

/** A proxy that rewrites the node's field answers' value 15 (the count) to 16. */
async function lyingProxy(target: string): Promise<Server & { url: string }> {
  const t = new URL(target);
  const server = createServer((req, res) => {
    httpRequest({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      const back: Buffer[] = [];
      r.on('data', (c: Buffer) => back.push(c));
      r.on('end', () => {
        const text = Buffer.concat(back).toString().replace('"value":"15"', '"value":"16"');
        res.writeHead(r.statusCode!, { 'content-type': r.headers['content-type'] ?? 'application/json' }).end(text);
      });
    }).end();
  }) as Server & { url: string };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  server.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return server;
}

test('field reads and call statuses are verified by default; a value a node lies about is refused bad_proof', async () => {
  const reader = new SvcReader({ nodeUrl: node.restUrl, network: 'regtest' });
  const count = await reader.readField(contractId, 'count');
  assert.deepEqual([count.value, count.proven], ['15', true]);
  const mine = await reader.readField(contractId, 'by_caller', Buffer.from(wallet.xOnly).toString('hex'));
  assert.deepEqual([mine.value, mine.exists, mine.proven], ['15', true, true]);
  await assert.rejects(reader.readField(contractId, 'by_caller'), (e: unknown) => e instanceof ClientError && e.code === 'bad_argument');
  const st = await reader.callStatus(firstTxid);
  assert.equal(st.proven?.outcome?.status, 'executed');

  const proxy = await lyingProxy(node.restUrl);
  try {
    const lied = new SvcReader({ nodeUrl: proxy.url, network: 'regtest' });
    await assert.rejects(lied.readField(contractId, 'count'), (e: unknown) => e instanceof ClientError && e.code === 'bad_proof');
    assert.equal((await lied.readField(contractId, 'count', undefined, { verify: false })).value, '16', 'unverified, the lie is read as it is');
  } finally {
    proxy.close();
  }
});

test('events paged by cursor: every event once, in order, pages of 2', async () => {
  const reader = new SvcReader({ nodeUrl: node.restUrl, network: 'regtest' });
  const all = (await new NodeClient(node.restUrl).events(contractId, { limit: 1000 })).events;
  let pages = 0;
  for await (const p of reader.eventPages(contractId, { limit: 2 })) {
    pages++;
    assert.ok(p.events.length <= 2);
  }
  const paged = [];
  for await (const e of reader.events(contractId, { limit: 2 })) paged.push(e);
  assert.deepEqual(paged, all);
  assert.equal(pages, Math.ceil(all.length / 2));
});

test('the feed from a stored position across a node restart and a reorg: the consumer holds exactly the node\'s log; restarted from its store it gets only what is new', async () => {
  const store = memoryCursorStore();
  const held: FollowMessage[] = [];
  const rollbacks: number[] = [];
  let reconnects = 0;
  const ctl = new AbortController();
  const reader = new SvcReader({ nodeUrl: node.restUrl, network: 'regtest' });
  const consumer = (async () => {
    for await (const m of reader.follow({
      subscriptions: [{ kind: 'events', id: 'ev', contractId, fromHeight: 0 }],
      store,
      signal: ctl.signal,
      reconnectDelayMs: 100,
      onReconnect: () => void reconnects++,
      onRollback: (r) => {
        rollbacks.push(r.fork_height);
        if ('retracted' in r) for (let i = held.length - 1; i >= 0; i--) if (r.retracted.includes((held[i] as { cursor: string }).cursor)) held.splice(i, 1);
      },
    })) held.push(m);
  })();
  const key = (e: { txid: string; log_index: number }): string => `${e.txid}:${e.log_index}`;
  const nodeLog = async (): Promise<string[]> => (await new NodeClient(node.restUrl).events(contractId, { limit: 1000 })).events.map(key);
  const holdsLog = async (): Promise<boolean> => JSON.stringify(held.map((m) => key(m as { txid: string; log_index: number }))) === JSON.stringify(await nodeLog());
  await waitUntil(node, holdsLog, 'the consumer holding the first 5 events');

  // The node restarts: the socket drops, the reader reconnects with backoff and resumes.
  await node.stop();
  node = await startOurNode();
  await bumps(2);
  await waitUntil(node, holdsLog, 'the events after the restart');
  assert.ok(reconnects >= 1);

  // A reorg retracts the last block's events; the next block holds their calls again.
  const last = await bumps(2);
  await waitUntil(node, holdsLog, 'the events of the block to be retracted');
  devnet.chain.reorg({ depth: 1, drop: last });
  await waitSynced(node, devnet);
  await waitUntil(node, async () => rollbacks.length > 0 && (await holdsLog()), 'the rollback applied');
  devnet.chain.mine(1);
  await waitSynced(node, devnet);
  await waitUntil(node, holdsLog, 'the calls again, in the next block');
  assert.equal(held.length, 5 + 2 + 2);
  assert.equal(new Set(held.map((m) => key(m as { txid: string; log_index: number }))).size, held.length, 'no event twice');
  ctl.abort();
  await consumer;

  // The consumer starts again from its store: only the new block's events.
  const fresh = await bumps(1);
  const ctl2 = new AbortController();
  const again: FollowMessage[] = [];
  for await (const m of reader.follow({ subscriptions: [{ kind: 'events', id: 'ev', contractId }], store, signal: ctl2.signal })) {
    again.push(m);
    ctl2.abort();
  }
  assert.deepEqual(again.map((m) => (m as { txid: string }).txid), fresh);
});
