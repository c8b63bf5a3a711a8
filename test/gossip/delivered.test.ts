/**
 * How far a sync has delivered (src/gossip/delivered.ts): the height below which a light
 * node's first sync lets blocks be applied while the rest is fetched. Too high, and a
 * payload arriving after its block replays the chain from there; so every case here is
 * one where a later payload could belong to a lower block.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DeliveredThrough, interleave } from '../../src/gossip/delivered.js';
import { toProtoPayload } from '../../src/gossip/wire.js';
import type { WirePayload } from '../../src/messages/gossip.js';
import { fakeCore, fakeSyncEngine, peerHolding } from '../helpers/sync-fakes.js';
import { unpackPayload } from '../../src/packed-payload.js';

const A = 'aa'.repeat(32);
const B = 'bb'.repeat(32);

/** Payloads of `contract` named `<prefix><i>`. */
const listOf = (contract: string, prefix: string, n: number): { txid: string; contract_id: string }[] => Array.from({ length: n }, (_, i) => ({ txid: `${prefix}${i}`, contract_id: contract }));

test('one contract listed in chain order: delivered through the block below the last call taken; a deploy says nothing; all taken: every block', () => {
  const list = [{ txid: 'deploy', contract_id: A }, ...listOf(A, 'c', 6)];
  // The deploy is confirmed late (height 50: answered as not confirmed); calls at 10, 10, 11, 12, 12, 13.
  const heights: Record<string, number | null> = { deploy: null, c0: 10, c1: 10, c2: 11, c3: 12, c4: 12, c5: 13 };
  const d = new DeliveredThrough(list, new Set([A]));
  assert.equal(d.settle(0, 1, (t) => heights[t]), -1, 'only the deploy: nothing known');
  assert.equal(d.settle(1, 3, (t) => heights[t]), 9, 'calls at 10 taken: the next may be at 10 too');
  assert.equal(d.settle(3, 5, (t) => heights[t]), 11, 'up to 12: through 11');
  assert.equal(d.settle(5, 7, (t) => heights[t]), Infinity, 'all taken');
});

test('pending calls (not confirmed) do not move it; a payload not taken, a list in txid order or a contract not started hold it back', () => {
  const pending = new DeliveredThrough(listOf(A, 'p', 4), new Set([A]));
  assert.equal(pending.settle(0, 2, (t) => (t === 'p0' ? 20 : null)), 19);
  assert.equal(pending.settle(2, 3, () => null), 19, 'a pending call taken: still 19');

  const gap = new DeliveredThrough(listOf(A, 'c', 4), new Set([A]));
  assert.equal(gap.settle(0, 2, (t) => (t === 'c0' ? 5 : undefined)), -1, 'c1 was not taken: it may come later, at any height');
  assert.equal(gap.settle(2, 3, () => 30), -1, 'and the contract stays held back for the rest of this sync');
  assert.equal(gap.settle(3, 4, () => 31), -1, 'even once the list is through');

  const unordered = new DeliveredThrough(listOf(A, 'r', 4), new Set());
  assert.equal(unordered.settle(0, 3, () => 7), -1, 'reconciled txids come in txid order');

  // Contracts one after another: B's calls, still to come, may be at any height.
  const twoInTurn = new DeliveredThrough([...listOf(A, 'a', 3), ...listOf(B, 'b', 3)], new Set([A, B]));
  assert.equal(twoInTurn.settle(0, 3, () => 40), -1, 'A done, B not started');
  assert.equal(twoInTurn.settle(3, 4, () => 8), 7, 'B under way: through its own taken height');
  assert.equal(twoInTurn.settle(4, 6, () => 9), Infinity);
});

test('contracts interleaved move together, each in its own order: the lowest of those with calls to come', () => {
  const a = listOf(A, 'a', 5);
  const b = listOf(B, 'b', 2);
  const list = interleave([a, b], 2);
  assert.deepEqual(
    list.map((m) => m.txid),
    ['a0', 'a1', 'b0', 'b1', 'a2', 'a3', 'a4'],
    'runs of two in turn, each contract in its order',
  );
  const heights: Record<string, number> = { a0: 3, a1: 4, b0: 9, b1: 12, a2: 4, a3: 6, a4: 8 };
  const d = new DeliveredThrough(list, new Set([A, B]));
  assert.equal(d.settle(0, 3, (t) => heights[t]), 3, 'A taken to 4, B to 9: A decides (through 3)');
  assert.equal(d.settle(3, 5, (t) => heights[t]), 3, 'B done: A alone, still at 4');
  assert.equal(d.settle(5, 6, (t) => heights[t]), 5);
  assert.equal(d.settle(6, 7, (t) => heights[t]), Infinity);
  assert.deepEqual(interleave([], 3), []);
});

test('a fresh node\'s sync tells its core, chunk by chunk, a height through which every call of the peer\'s list has been taken', async () => {
  // 2,000 calls a block from height 100 (the deploy confirmed at 100), past two SYNC_CHUNKs of fetches.
  const contract = 'ee'.repeat(32);
  const deploy = 'ff'.repeat(32);
  const calls = Array.from({ length: 9_000 }, (_, i) => createHash('sha256').update(`call ${i}`).digest('hex'));
  const heightOf = new Map<string, number>([[deploy, 100], ...calls.map((t, i): [string, number] => [t, 100 + Math.floor(i / 2_000)])]);
  const listed = [deploy, ...calls];
  const payload = (txid: string): WirePayload => ({
    kind: txid === deploy ? 'deploy' : 'call',
    txid,
    contract_id: txid === deploy ? '' : contract,
    body: Buffer.from('{}'),
    evidence: { anchorTx: Buffer.of(1), confirmed: { blockHash: '00'.repeat(32), height: heightOf.get(txid)!, txIndex: 1, branch: [] }, spentBy: null },
  });
  const peer = {
    url: 'http://peer',
    client: peerHolding(
      contract,
      listed,
      async (asked) => {
        await new Promise((r) => setImmediate(r));
        return { payloads: asked.map((t) => ({ payload: toProtoPayload(payload(t)), position: null })), answered: asked.length };
      },
      (method) => (method === 'GetContractTxids' ? { txids: listed.map((t) => Buffer.from(t, 'hex')), more: false } : undefined),
    ),
  };
  const taken = new Set<string>();
  const told: number[] = [];
  const core = fakeCore(async (method, params) => {
    if (method === 'peerSubmitMany') {
      const ps = (params['payloads'] as Uint8Array[]).map(unpackPayload);
      await new Promise((r) => setImmediate(r));
      for (const p of ps) taken.add(p.txid);
      return { results: ps.map(() => ({ ok: true, created: true })) };
    }
    if (method === 'peerSyncDelivered') {
      const h = (params['height'] as number | null) ?? Infinity;
      // What a user relies on: no call of a block at or below it is still to come.
      const early = calls.filter((t) => heightOf.get(t)! <= h && !taken.has(t));
      assert.equal(early.length, 0, `told ${h} with ${early.length} calls at or below it still to come`);
      told.push(h);
      return { ok: true };
    }
    return undefined;
  });
  const engine = fakeSyncEngine(core, [peer], 4);
  const r = await engine.syncWith(peer as never);
  assert.equal(r.applied, listed.length);
  // Chunks of 4,096: the first ends among the calls at 102, the second among those at 104; then all.
  assert.deepEqual(told, [101, 103, Infinity], 'told after each chunk was taken');
});
