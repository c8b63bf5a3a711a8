/**
 * Deferred checks' schedule (src/core/deferred/) against a real writer thread:
 * a payload whose evidence names a held block waits for that block, never for a time,
 * so a light node catching up from its peers asks the endpoint nothing for what their
 * evidence decides; one without evidence is first checked after the next block or a
 * block's time, whichever comes first. What a check asks first is the writer
 * (`payloadAt`: still held?), so the writer's calls show which checks ran and when.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { EsploraClient } from '../../../src/chain/esplora-client.js';
import { DeferredChecks } from '../../../src/core/deferred/checks.js';
import { RpcClient, portTransport } from '../../../src/ipc/rpc.js';
import type { WriterApi, WriterEvents, WriterInit } from '../../../src/messages/writer.js';

const txid = (n: number): string => n.toString(16).padStart(64, '0');

/**
 * A real writer thread over a fresh RocksDB directory, as the core starts it. Due
 * payloads are first sifted (`stillPending`, many at once) and a pending one's check
 * starts with `payloadAt`, so `onAsked` sees which payloads were asked about, in order,
 * with the writer's answer (the writer holds none of them: the sift forgets them).
 * `questions` counts the writer calls of each method.
 */
async function writerThread(onAsked: (txid: string, answered: Promise<unknown>) => void, questions: Map<string, number> = new Map()): Promise<{ writer: RpcClient<WriterApi, WriterEvents>; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-deferred-'));
  const workerData: WriterInit = { dbPath: join(dir, 'db'), nodeId: 'n', maxPendingCalls: 1_000, logFilter: 'warn', secrets: [] };
  const thread = new Worker(new URL('../../../src/writer/thread.js', import.meta.url), { workerData });
  const writer = new RpcClient<WriterApi, WriterEvents>(portTransport(thread));
  await new Promise<void>((resolve) => writer.on('ready', () => resolve()));
  const call = writer.call.bind(writer);
  (writer as { call: typeof writer.call }).call = ((method, params, ...rest) => {
    const answer = call(method, params, ...rest);
    questions.set(method, (questions.get(method) ?? 0) + 1);
    if (method === 'payloadAt') onAsked((params as { txid: string }).txid, answer);
    if (method === 'stillPending') for (const t of (params as { txids: string[] }).txids) onAsked(t, answer);
    return answer;
  }) as typeof writer.call;
  return {
    writer,
    close: async () => {
      await thread.terminate();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('a payload whose evidence names a block is checked once that block is applied, never by time; one without evidence after the next block or a block\'s time', async () => {
  const checked: string[] = [];
  const waiters: { txid: string; resolve: () => void }[] = [];
  const { writer, close } = await writerThread((t, answered) => {
    checked.push(t);
    // Resolved once the writer answered: the payload is then forgotten (it holds no such payload).
    void answered.then(() => {
      for (const w of waiters.filter((x) => x.txid === t)) w.resolve();
    });
  });
  const checkedOnce = (t: string): Promise<void> => (checked.includes(t) ? Promise.resolve() : new Promise((resolve) => waiters.push({ txid: t, resolve })));
  // Nothing here reaches the endpoint: the writer holds none of these payloads, so each
  // is forgotten when sifted. A closed port makes any request fail loudly.
  const chain = new EsploraClient({ baseUrl: 'http://127.0.0.1:9', retries: 0, budget: false });
  const firstCheckAfterMs = 20;
  const deferred = new DeferredChecks(chain, writer, firstCheckAfterMs);
  try {
    deferred.processedAt(100);
    await deferred.seed(100, 100);
    const evidenced = txid(1);
    const plain = txid(2);
    const afterBlock = txid(3);
    // Added in this order: were the evidenced payload due by time as well, it would be
    // checked before the plain one (both fall due at the same time, first in first out).
    deferred.added(evidenced, 'call', `${txid(9)}:0`, 100, 105);
    deferred.added(plain, 'call', `${txid(9)}:1`, 100, null);
    await checkedOnce(plain);
    assert.deepEqual(checked, [plain], 'the plain payload is checked after a block\'s time; the evidenced one is not');

    deferred.added(afterBlock, 'deploy', null, 100, null);
    deferred.processedAt(101);
    await checkedOnce(afterBlock);
    deferred.processedAt(104);
    assert.ok(!checked.includes(evidenced), 'blocks below the evidence\'s do not make it due');
    deferred.processedAt(105);
    await checkedOnce(evidenced);
    assert.deepEqual(checked, [plain, afterBlock, evidenced]);
  } finally {
    deferred.stop();
    await close();
  }
});

test('of 100,000 payloads waiting on blocks, those whose block was applied are sifted in the order they fell due, 5,000 decided ones in two writer questions', async () => {
  const checked: string[] = [];
  const questions = new Map<string, number>();
  let done: () => void = () => {};
  const all = new Promise<void>((resolve) => (done = resolve));
  const N = 100_000;
  const DUE = 5_000;
  const { writer, close } = await writerThread((t, answered) => {
    checked.push(t);
    if (checked.length === DUE) void answered.then(() => done());
  }, questions);
  const chain = new EsploraClient({ baseUrl: 'http://127.0.0.1:9', retries: 0, budget: false });
  // No time trigger within the test: only blocks make these due.
  const deferred = new DeferredChecks(chain, writer, 3_600_000);
  try {
    deferred.processedAt(0);
    await deferred.seed(0, 0);
    // Payload i's evidence names block 1 + (i % 400): 5,000 fall due at heights 1..20,
    // the rest at 21..400, which are not applied.
    for (let i = 0; i < N; i++) deferred.added(txid(i + 1), 'call', `${txid(0)}:${i}`, 0, 1 + (i % 400));
    deferred.processedAt(20);
    await all;
    assert.equal(checked.length, DUE);
    assert.equal(deferred.snapshot().tracked, N - DUE, 'the sifted payloads, no longer held, are forgotten; the rest wait');
    assert.equal(questions.get('stillPending'), Math.ceil(DUE / 4_096), 'one writer question per 4,096 due payloads');
    assert.equal(questions.get('payloadAt') ?? 0, 0, 'none decided is checked alone');
    const heights = checked.map((t) => 1 + ((parseInt(t, 16) - 1) % 400));
    assert.ok(heights.every((h) => h <= 20), 'only payloads whose block was applied were checked');
    for (let i = 1; i < heights.length; i++) assert.ok(heights[i - 1]! <= heights[i]!, `in height order (${heights[i - 1]} before ${heights[i]})`);
  } finally {
    deferred.stop();
    await close();
  }
});

test('a check that fails waits for new blocks (backing off by blocks), never re-runs on a timer', async () => {
  const asked: string[] = [];
  const pending = txid(7);
  // A writer that holds one pending call; nothing else is asked of it before the endpoint.
  const writer = {
    call: async (method: string): Promise<unknown> => {
      asked.push(method);
      switch (method) {
        case 'pendingPayloads':
          return [];
        case 'stillPending':
          return [true];
        case 'payloadAt':
          return { kind: 'call', contract_id: txid(8), body_hash: txid(9) };
        case 'call':
          return { txid: pending, status: 'pending' };
        default:
          throw new Error(`unexpected writer call ${method}`);
      }
    },
  } as unknown as RpcClient<WriterApi>;
  // A closed port: every endpoint request fails at once (chain_unavailable).
  const chain = new EsploraClient({ baseUrl: 'http://127.0.0.1:9', retries: 0, budget: false });
  // Each check's one request, counted once it has failed.
  let failed = 0;
  const outspend = chain.outspend.bind(chain);
  chain.outspend = (async (...a: Parameters<typeof outspend>) => {
    try {
      return await outspend(...a);
    } finally {
      failed++;
    }
  }) as typeof chain.outspend;
  const checks = (): number => asked.filter((m) => m === 'payloadAt').length;
  const deferred = new DeferredChecks(chain, writer, 20);
  try {
    deferred.processedAt(100);
    await deferred.seed(100, 100);
    deferred.added(pending, 'call', `${txid(9)}:0`, 100, null);
    /** Until the n-th check has failed and been rescheduled (the next block is given only then). */
    const until = async (n: number): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (failed < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 5));
    };
    await until(1);
    // 25 first-check intervals with no new block: the failed check is not run again.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(checks(), 1, 'no check without a new block');
    deferred.processedAt(101, 101);
    await until(2);
    assert.equal(checks(), 2, 'the next block brings the next check');
    // It failed again: now two new blocks of the chain (1, 2, 4 ...).
    deferred.processedAt(102, 102);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(checks(), 2, 'one block is not enough after a second failure');
    deferred.processedAt(103, 103);
    await until(3);
    assert.equal(checks(), 3);
  } finally {
    deferred.stop();
  }
});
