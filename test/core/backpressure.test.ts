/** A saturated worker pool makes intake answer 503 overloaded instead of queueing without bound. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startNode } from '../helpers/node-process.js';

test('pool queue full: intake answers 503 overloaded, other requests still served', async () => {
  const node = await startNode({ env: { SVC_WORKERS_POOL_SIZE: '1', SVC_WORKERS_QUEUE_LIMIT: '1' } });
  try {
    // Well-formed requests whose payload the pool must decode (and refuse): each holds a
    // pool slot, so a burst overflows a queue of one.
    const payload = Buffer.alloc(40_000, 7).toString('base64');
    const body = JSON.stringify({ txid: 'ab'.repeat(32), contract_id: 'cd'.repeat(32), payload });
    // A burst of 64 overflows the queue unless the one pool thread keeps up with their
    // arrival, which a loaded machine can make it do (the test runner starts two files at
    // once): bursts repeat until one overflows, at most MAX_BURSTS.
    const MAX_BURSTS = 20;
    const codes = new Set<string>();
    for (let burst = 0; burst < MAX_BURSTS && !codes.has('503 overloaded'); burst++) {
      const answers = await Promise.all(
        Array.from({ length: 64 }, () => fetch(`${node.restUrl}/contract_call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => ({ status: r.status, code: ((await r.json()) as { error: { code: string } }).error.code }))),
      );
      for (const a of answers) codes.add(`${a.status} ${a.code}`);
    }
    assert.ok(codes.has('503 overloaded'), `expected some 503 overloaded in ${MAX_BURSTS} bursts, got ${[...codes].join(', ')}`);
    for (const c of codes) assert.ok(c === '503 overloaded' || c === '400 bad_request', `unexpected answer ${c}`);
    const health = await fetch(`${node.restUrl}/health`);
    assert.equal(health.status, 200);
    const status = (await (await fetch(`${node.restUrl}/node_status`)).json()) as { pool: { queue_limit: number } };
    assert.equal(status.pool.queue_limit, 1);
  } finally {
    const code = await node.stop();
    assert.equal(code, 0, `the node exited with ${code}; last lines:\n${node.raw.slice(-20).join('\n')}`);
  }
});
