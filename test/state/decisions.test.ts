/**
 * The decision leaf, the decisions root and the state root of root version 2
 * (packages/protocol/src/state/decisions.ts, docs/STATE.md "Decisions"): the leaf reads back exactly and
 * only from its canonical bytes; the decisions root does not depend on the order of the
 * entries; a proof verifies only under its own state root.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { checkRootParts, decisionsRoot, decodeDecision, encodeDecision, proveDecision, stateRootOf, verifyDecisionProof, type Decision } from '@svc-node/protocol/state/decisions';

const h = (s: string): Uint8Array => new Uint8Array(createHash('sha256').update(s).digest());

const executed: Decision = {
  status: 'executed',
  txIndex: 7,
  result: { type: 'u128', value: (1n << 100n) + 3n },
  errorCode: null,
  events: [
    { contractId: h('c'), name: 'Moved', params: [{ type: 'u64', value: 5n }, { type: 'i64', value: -3n }, { type: 'bool', value: true }, { type: 'string', value: 'héllo' }, { type: 'bytes', value: Uint8Array.of(1, 2) }, { type: 'key', value: h('k') }] },
    { contractId: h('callee'), name: 'E', params: [] },
  ],
};
const cases: Decision[] = [
  executed,
  { status: 'executed', txIndex: 1, result: null, errorCode: null, events: [] },
  { status: 'failed', txIndex: 2, result: null, errorCode: 'revert', events: [] },
  { status: 'invalid', txIndex: 3, result: null, errorCode: 'duplicate_call_id', events: [] },
];

test('every decision reads back from its leaf, and only its canonical bytes read', () => {
  for (const d of cases) {
    const leaf = encodeDecision(d);
    assert.deepEqual(encodeDecision(decodeDecision(leaf)), leaf);
    assert.equal(decodeDecision(leaf).status, d.status);
  }
  const leaf = encodeDecision(executed);
  assert.throws(() => decodeDecision(Buffer.concat([leaf, Buffer.of(0)])), /canonical/);
  assert.throws(() => decodeDecision(leaf.subarray(0, leaf.length - 1)), /decode|canonical/);
  const status = Buffer.from(leaf);
  status[0] = 9;
  assert.throws(() => decodeDecision(status), /unknown status/);
  const bool = encodeDecision({ ...executed, result: { type: 'bool', value: true } });
  bool[7]! += 1; // the bool's byte: 2 reads as false and writes back as 0
  assert.throws(() => decodeDecision(bool), /canonical/);
  // A drop is committed by no root (it depends on the payloads a node holds): no leaf encodes one, none decodes to one.
  assert.throws(() => decodeDecision(Buffer.of(4)), /unknown status byte 4/);
  assert.throws(() => decodeDecision(Buffer.of(4, 0, 0, 0, 1)), /unknown status byte 4/);
  assert.throws(() => encodeDecision({ status: 'dropped' as Decision['status'], txIndex: null as unknown as number, result: null, errorCode: null, events: [] }), /no decision leaf for status dropped/);
  assert.deepEqual([...encodeDecision(cases[2]!)], [2, 0, 0, 0, 2, 0, 6, ...Buffer.from('revert')]);
});

test('the decisions root is the Merkle trie root of the entries, whatever their order', () => {
  for (const n of [0, 1, 2, 3, 17, 300]) {
    const entries: [Uint8Array, Uint8Array][] = Array.from({ length: n }, (_, i) => [h(`tx${i}`), encodeDecision({ ...cases[i % cases.length]!, txIndex: i })]);
    const want = decisionsRoot(entries);
    assert.deepEqual(decisionsRoot([...entries].reverse()), want, `${n} entries reversed`);
    assert.deepEqual(decisionsRoot([...entries].sort((a, b) => Buffer.compare(Buffer.from(a[1]), Buffer.from(b[1])))), want, `${n} entries by leaf`);
    if (n > 1) assert.notDeepEqual(decisionsRoot(entries.slice(1)), want, 'another set, another root');
  }
  assert.deepEqual(decisionsRoot([]), new Uint8Array(32));
});

test('a decision proof verifies under its state root only; the version byte keeps the contracts root apart', () => {
  const entries: [Uint8Array, Uint8Array][] = cases.map((d, i) => [h(`tx${i}`), encodeDecision(d)]);
  const contracts = h('contracts');
  const decided = decisionsRoot(entries);
  const root = stateRootOf(contracts, decided);
  assert.notDeepEqual(root, contracts);
  assert.notDeepEqual(stateRootOf(contracts, new Uint8Array(32)), contracts, 'a block that decided nothing still has a version-2 root');
  const d = verifyDecisionProof(root, contracts, decided, h('tx0'), proveDecision(entries, h('tx0')));
  assert.deepEqual(encodeDecision(d!), entries[0]![1]);
  assert.equal(verifyDecisionProof(root, contracts, decided, h('nope'), proveDecision(entries, h('nope'))), null, 'a txid the block did not decide is shown absent');
  assert.throws(() => verifyDecisionProof(root, h('other'), decided, h('tx0'), proveDecision(entries, h('tx0'))), /do not fold/);
  assert.throws(() => verifyDecisionProof(root, contracts, decided, h('tx1'), proveDecision(entries, h('tx0'))), /not on the key path|root mismatch/);
  assert.doesNotThrow(() => checkRootParts(contracts, contracts, null), 'the journal anchor: the contracts root itself');
});
