/**
 * Records as stored (src/writer/store/): a reader gets back exactly what the block made: call
 * decisions for every status, result type and error (unicode included), call records
 * from their two parts, and journal entries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CallOutcome } from '../../src/records.js';
import { callDecisions, calls, evidenceAt, journal } from '../../src/writer/store/index.js';
import { valueToJson, type Value } from '@svc-node/protocol/value';

test('stored call decisions give back every status, result type and error exactly', () => {
  const results: (Value | null)[] = [
    null,
    { type: 'u64', value: (1n << 64n) - 1n },
    { type: 'i64', value: -5n },
    { type: 'u128', value: (1n << 128n) - 1n },
    { type: 'bool', value: false },
    { type: 'string', value: 'ok ✓' },
    { type: 'bytes', value: Uint8Array.of(1, 2, 3) },
    { type: 'key', value: new Uint8Array(32).fill(9) },
  ];
  const outcomes: CallOutcome[] = [
    ...results.map((result, i): CallOutcome => ({ status: 'executed', block_height: 0, tx_index: i, result, error: null, instructions: 0 })),
    { status: 'failed', block_height: 7, tx_index: 2, result: null, error: { code: 'out_of_gas', message: 'ran out after 1 000 000 instructions' }, instructions: 1_000_000 },
    { status: 'invalid', block_height: 4_294_967_294, tx_index: 4_294_967_294, result: null, error: { code: 'anchor_mismatch', message: 'binding failed: ünïcode' }, instructions: null },
    { status: 'invalid', block_height: 1, tx_index: 1, result: null, error: { code: '', message: '' }, instructions: null },
    { status: 'dropped', block_height: null, tx_index: null, result: null, error: null, instructions: null },
  ];
  for (const d of outcomes) {
    const stored = callDecisions.encode(d);
    assert.equal(callDecisions.statusOf(stored), d.status);
    assert.deepEqual(callDecisions.decode(stored), { ...d, result: d.result ? valueToJson(d.result) : null });
  }
});

test('a call record is its fixed part with its decision, pending when there is none', () => {
  const fixed = { txid: 'aa'.repeat(32), contract_id: 'bb'.repeat(32), envelope_hash: 'cc'.repeat(32), function: 'transfer', caller: 'dd'.repeat(32), call_id: '18446744073709551615', outpoint: `${'ee'.repeat(32)}:3` };
  const stored = calls.encode({ ...fixed, status: 'pending', block_height: null, tx_index: null, result: null, error: null, instructions: null });
  assert.deepEqual(calls.decode(stored, undefined), { ...fixed, status: 'pending', block_height: null, tx_index: null, result: null, error: null, instructions: null });
  const decision = callDecisions.encode({ status: 'executed', block_height: 12, tx_index: 3, result: { type: 'u64', value: 5n }, error: null, instructions: 77 });
  assert.deepEqual(calls.decode(stored, decision), { ...fixed, status: 'executed', block_height: 12, tx_index: 3, result: '5', error: null, instructions: 77 });
});

test('a stored journal entry gives back the block as applied, merkle branches included', () => {
  const h = (c: string): string => c.repeat(64);
  const rec = {
    height: 4_294_967_295,
    hash: h('1'),
    prevHash: h('2'),
    state_root: h('3'),
    txs: [
      { txIndex: 1, txid: h('a'), hex: '0200000001' + 'ab'.repeat(40), branch: [Buffer.alloc(32, 7), Buffer.alloc(32, 9)] },
      { txIndex: 70_000, txid: h('b'), hex: '00', branch: null },
    ],
    dropped: [h('c'), h('d')],
    unstamped: [[5, h('e')]] as [number, string][],
  };
  const stored = journal.encode(rec);
  assert.deepEqual(journal.decode(stored), rec);
  assert.equal(journal.hashOf(stored), h('1'));
  // Read for one transaction (a peer's GetPayloads): the same transaction, by txid.
  const view = new journal.EntryView(stored);
  assert.deepEqual([view.height, view.hash], [rec.height, rec.hash]);
  assert.deepEqual([view.tx(h('b')), view.tx(h('a'))], [rec.txs[1], rec.txs[0]]);
  assert.equal(view.tx(h('c')), null, 'a dropped call is not a transaction of the entry');
  assert.deepEqual(journal.decode(journal.encode({ ...rec, txs: [], dropped: [], unstamped: [] })), { ...rec, txs: [], dropped: [], unstamped: [] });
  assert.throws(() => journal.encode({ ...rec, hash: 'zz'.repeat(32) }), /not 32 bytes of hex/);
  assert.throws(() => journal.encode({ ...rec, txs: [{ txIndex: 1, txid: h('a'), hex: '0g' }] }), /not hex/);
});

test('a journal entry written before branches were kept (format 1) still reads, its branches unknown', () => {
  const h = (c: string): string => c.repeat(64);
  const txs = [
    { txIndex: 3, txid: h('a'), hex: 'ab'.repeat(70), branch: null },
    { txIndex: 9, txid: h('b'), hex: 'cd'.repeat(90), branch: null },
  ];
  const rec = { height: 812_345, hash: h('1'), prevHash: h('2'), state_root: h('3'), txs, dropped: [h('c')], unstamped: [] as [number, string][] };
  // Format 1: the same layout without the branch-depth byte after each transaction.
  const v2 = journal.encode(rec);
  const parts: Buffer[] = [Buffer.of(1), v2.subarray(1, 105)];
  let o = 105;
  for (const t of txs) {
    const len = 40 + t.hex.length / 2;
    parts.push(v2.subarray(o, o + len));
    assert.equal(v2[o + len], 0xff, 'format 2 marks an unknown branch');
    o += len + 1;
  }
  parts.push(v2.subarray(o));
  const v1 = Buffer.concat(parts);
  assert.deepEqual(journal.decode(v1), rec);
  assert.equal(journal.hashOf(v1), h('1'));
  assert.deepEqual(new journal.EntryView(v1).tx(h('b')), txs[1]);
});

test('a claim filed under its block gives back its branch and the root it folded to; one filed before roots were kept reads without', () => {
  const branch = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)];
  const root = new Uint8Array(32).fill(3);
  const txid = 'ab'.repeat(32);
  const k = evidenceAt.key(7, 'cd'.repeat(32), txid, evidenceAt.KIND_ANCHOR);
  const anchor = { kind: evidenceAt.KIND_ANCHOR, txid, txIndex: 5, raw: Uint8Array.of(9, 9, 9), branch } as const;
  const hexOf = (u: Uint8Array): string => Buffer.from(u).toString('hex');
  const norm = (c: evidenceAt.Claim): unknown => ({
    ...c,
    branch: c.branch.map(hexOf),
    ...('raw' in c ? { raw: hexOf(c.raw) } : {}),
    ...(c.root ? { root: hexOf(c.root) } : {}),
  });
  assert.deepEqual(norm(evidenceAt.decode(k, evidenceAt.encode({ ...anchor, root }))), norm({ ...anchor, root }));
  // The earlier format: the same bytes without the root; the claim is folded when applied.
  const old = evidenceAt.decode(k, evidenceAt.encode(anchor));
  assert.equal(old.root, undefined);
  assert.deepEqual(norm(old), norm(anchor));
  const ks = evidenceAt.key(7, 'cd'.repeat(32), txid, evidenceAt.KIND_SPEND);
  const spend = { kind: evidenceAt.KIND_SPEND, txid, spenderIndex: 2, spenderTxid: 'ef'.repeat(32), outpoint: `${'01'.repeat(32)}:4`, branch } as const;
  assert.deepEqual(norm(evidenceAt.decode(ks, evidenceAt.encode({ ...spend, root }))), norm({ ...spend, root }));
  assert.deepEqual(norm(evidenceAt.decode(ks, evidenceAt.encode(spend))), norm(spend));
});
