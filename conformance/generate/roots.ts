/**
 * State roots: contracts and their storage -> the contracts root; a block's decisions ->
 * their leaves, the decisions root and the state root of this version (docs/STATE.md).
 */
import { MerkleTrie, type TrieProof } from '@svc-node/protocol/state/trie';
import { hex, type Area, type CaseInput } from './kit.js';
import { seeded } from './keys.js';

const id = (s: string) => hex(seeded(s));

function contractsCases(): CaseInput[] {
  const a = id('contract a');
  const b = id('contract b');
  const code = id('code');
  const entries: [string, string][] = [['00', '01'], ['0001', 'ff'], ['01', ''], [id('key'), '00'.repeat(40)]];
  const c = (id: string, contracts: unknown[], pins: string): CaseInput => ({ id, pins, input: { contracts } });
  return [
    c('empty', [], 'no contracts: the contracts root is 32 zero bytes'),
    c('one-contract-no-storage', [{ contract_id: a, code_hash: code, storage: [] }], 'a contract with empty storage: its entry is code_hash || 32 zero bytes'),
    c('one-entry', [{ contract_id: a, code_hash: code, storage: [['00', '01']] }], 'one storage entry: a one-leaf storage trie'),
    c('entries', [{ contract_id: a, code_hash: code, storage: entries }], 'storage keys of different lengths and an empty value'),
    c('entries-other-order', [{ contract_id: a, code_hash: code, storage: [...entries].reverse() }], 'the order entries are written in does not change the root'),
    c('keys-differ-in-last-bit', [{ contract_id: a, code_hash: code, storage: [['00'.repeat(31) + '00', '01'], ['00'.repeat(31) + '01', '01']] }], 'keys differing in one bit are two leaves'),
    c('two-contracts', [{ contract_id: a, code_hash: code, storage: entries }, { contract_id: b, code_hash: code, storage: [] }], 'two contracts with the same code: two entries of the contracts trie'),
    c('two-contracts-other-order', [{ contract_id: b, code_hash: code, storage: [] }, { contract_id: a, code_hash: code, storage: entries }], 'the order contracts are added in does not change the root'),
    c('value-changes-root', [{ contract_id: a, code_hash: code, storage: [['00', '02']] }], 'one storage byte changed: another root than one-entry'),
    c('code-hash-in-root', [{ contract_id: a, code_hash: id('other code'), storage: [['00', '01']] }], 'the code hash is committed: another root than one-entry'),
  ];
}

function decisionsCases(): CaseInput[] {
  const contractsRoot = id('contracts root');
  const t = (s: string) => id(`txid ${s}`);
  const emitter = id('contract a');
  const executed = {
    txid: t('1'), status: 'executed', tx_index: 1, result: { type: 'u64', value: '7' }, error_code: null,
    events: [{ contract_id: emitter, name: 'Bumped', params: [{ type: 'key', value: id('who') }, { type: 'u64', value: '7' }] }, { contract_id: id('contract b'), name: 'Ping', params: [] }],
  };
  const noResult = { txid: t('2'), status: 'executed', tx_index: 2, result: null, error_code: null, events: [] };
  const failed = { txid: t('3'), status: 'failed', tx_index: 3, result: null, error_code: 'require_failed', events: [] };
  const invalid = { txid: t('4'), status: 'invalid', tx_index: 65535, result: null, error_code: 'bad_signature', events: [] };
  const every = [{ type: 'u64', value: '18446744073709551615' }, { type: 'i64', value: '-1' }, { type: 'u128', value: '1' }, { type: 'bool', value: false }, { type: 'string', value: '\u00e9' }, { type: 'bytes', value: '' }, { type: 'key', value: id('k') }];
  const allTypes = { txid: t('5'), status: 'executed', tx_index: 5, result: { type: 'string', value: 'ok' }, error_code: null, events: [{ contract_id: emitter, name: 'All', params: every }] };
  const c = (id: string, decisions: unknown[], pins: string): CaseInput => ({ id, pins, input: { contracts_root: contractsRoot, decisions } });
  return [
    c('none', [], 'a block that decided nothing: decisions root of 32 zero bytes; state root = TH("SVC/root", 03 || contracts_root || decisions_root)'),
    c('executed', [executed], 'an executed call: status 1, tx_index, result, events with their emitting contract'),
    c('executed-no-result', [noResult], 'an executed call returning nothing: has_result 0, no events'),
    c('failed', [failed], 'a failed call: status 2, tx_index, its error code'),
    c('invalid', [invalid], 'an invalid call: status 3, tx_index, its error code'),
    c('every-value-type', [allTypes], 'event params of every value type in their binary form'),
    c('block', [executed, noResult, failed, invalid], 'four decisions of one block'),
    c('block-other-order', [invalid, failed, noResult, executed], 'the order calls were decided in does not change the decisions root'),
    c('tx-index-committed', [{ ...failed, tx_index: 4 }], 'the anchor\'s place in the block is committed: another leaf than failed'),
  ];
}

export function rootsArea(): Area {
  return { 'roots.contracts': contractsCases(), 'roots.decisions': decisionsCases() };
}

/** Proofs of a trie entry (docs/STATE.md, "Proofs"): present, absent, and broken ones. */
export function proofArea(): Area {
  const entries: [Uint8Array, Uint8Array][] = Array.from({ length: 6 }, (_, i) => [seeded(`proof key ${i}`).subarray(0, 8 + i), Uint8Array.of(i, i)]);
  const trie = new MerkleTrie(entries);
  const root = hex(trie.rootHash());
  const proofJson = (p: TrieProof) => ({ siblings: p.siblings.map(hex), leaf: p.leaf === null ? null : { path: hex(p.leaf.path), value: hex(p.leaf.value) } });
  const present = proofJson(trie.prove(entries[2]![0]));
  const absentKey = seeded('proof absent key');
  const absent = proofJson(trie.prove(absentKey));
  const c = (id: string, key: string, proof: unknown, pins: string, r = root): CaseInput => ({ id, pins, input: { root: r, key, proof } });
  const flip = (h: string) => (h[0] === '0' ? '1' : '0') + h.slice(1);
  const trieCases = [
    c('present', hex(entries[2]![0]), present, 'a present key: the siblings fold its leaf to the root, the value is proven'),
    c('absent', hex(absentKey), absent, 'an absent key: the proof ends at another path\'s leaf or an empty subtree, proving absence'),
    c('single-entry', '00', proofJson(new MerkleTrie([[Uint8Array.of(0), Uint8Array.of(1)]]).prove(Uint8Array.of(0))), 'a one-entry trie: no siblings, the root is the leaf hash', hex(new MerkleTrie([[Uint8Array.of(0), Uint8Array.of(1)]]).rootHash())),
    c('empty-trie', '00', { siblings: [], leaf: null }, 'the empty trie (root of 32 zero bytes) proves every key absent', '00'.repeat(32)),
    c('value-changed', hex(entries[2]![0]), { ...present, leaf: { ...present.leaf!, value: 'ffff' } }, 'another value does not fold to the root: refused'),
    c('sibling-changed', hex(entries[2]![0]), { ...present, siblings: [flip(present.siblings[0]!), ...present.siblings.slice(1)] }, 'a changed sibling does not fold to the root: refused'),
    c('other-key', hex(entries[3]![0]), present, 'a proof of one key does not prove another: refused'),
    c('too-deep', hex(entries[2]![0]), { siblings: Array.from({ length: 257 }, () => '00'.repeat(32)), leaf: present.leaf }, 'more than 256 siblings: refused'),
  ];
  return { 'roots.trie-proof': trieCases };
}

/**
 * Contract summaries (docs/STATE.md, "Contract summaries"): the sorted Merkle tree peers
 * compare before transferring payloads. History, not state: no root of a block commits to
 * it, but two nodes holding the same payloads must answer the same root.
 */
export function summaryArea(): Area {
  const e = (i: number): [string, string] => [hex(seeded(`summary txid ${i}`)), hex(seeded(`summary payload hash ${i}`))];
  const c = (id: string, entries: [string, string][], pins: string): CaseInput => ({ id, pins, input: { entries } });
  const five = [0, 1, 2, 3, 4].map(e);
  const cases = [
    c('empty', [], 'no entries: 32 zero bytes'),
    c('one', [e(0)], 'one entry: the root is its leaf, TH("SVC/leaf", u32le(len key) || key || value)'),
    c('two', [e(0), e(1)], 'two entries sorted by key: TH("SVC/node", left || right)'),
    c('three', [e(0), e(1), e(2)], 'an odd level carries its last node up unchanged (never duplicated)'),
    c('five', five, 'five entries: a carried node at two levels'),
    c('five-other-order', [...five].reverse(), 'the order entries are given in does not change the root'),
    c('short-keys', [['00', '01'], ['0000', '01'], ['01', '']], 'keys of different lengths sort bytewise, a shorter prefix first; the key length is committed'),
  ];
  return { 'roots.summary': cases };
}
