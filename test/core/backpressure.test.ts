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
    const answers = await Promise.all(
      Array.from({ length: 64 }, () => fetch(`${node.restUrl}/contract_call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => ({ status: r.status, code: ((await r.json()) as { error: { code: string } }).error.code }))),
    );
    const codes = new Set(answers.map((a) => `${a.status} ${a.code}`));
    assert.ok(codes.has('503 overloaded'), `expected some 503 overloaded, got ${[...codes].join(', ')}`);
    for (const c of codes) assert.ok(c === '503 overloaded' || c === '400 bad_request', `unexpected answer ${c}`);
    const health = await fetch(`${node.restUrl}/health`);
    assert.equal(health.status, 200);
    const status = (await (await fetch(`${node.restUrl}/node_status`)).json()) as { pool: { queue_limit: number } };
    assert.equal(status.pool.queue_limit, 1);
  } finally {
    assert.equal(await node.stop(), 0);
  }
});
