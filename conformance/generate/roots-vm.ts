/**
 * State and summary trees where the node's own lookup index could go wrong: storage keys
 * whose FNV-1a hashes are equal (the state trie's read map chains them: each must keep its
 * own entry through inserts, updates and deletes in any order), and summary keys sorted by
 * every byte (keys equal in their first byte, first bytes one apart, a key that is another's
 * prefix, given out of order). The rules are docs/STATE.md's ("State root", "Contract summaries").
 */
import { encodeStorageValue } from '@svc-node/protocol/vm/storage-layout';
import { trieLeafHash, trieNodeHash, triePath } from '@svc-node/protocol/state/trie';
import { encodeDecision, type Decision } from '@svc-node/protocol/state/decisions';
import { hex, type CaseInput } from './kit.js';
import { seeded } from './keys.js';

// Two 8-byte keys with one FNV-1a hash (the u64 map keys of execution-vm.ts, as the VM encodes them).
const KA = hex(encodeStorageValue({ type: 'u64', value: 623380075610287n }));
const KB = hex(encodeStorageValue({ type: 'u64', value: 2644863551372661n }));
// A key and the same key with three bytes appended, with one FNV-1a hash (a fixed point of FNV-1a over 6b906b, found by a search).
export const PREFIX_KEY = '60933e5cd874bb57';
export const EXTENDED_KEY = '60933e5cd874bb576b906b';
// Three 8-byte keys with one FNV-1a hash (a triple found by a search).
const T = [5625383614705788212n, 5664438287104839855n, 13870154376587471629n].map((v) => hex(encodeStorageValue({ type: 'u64', value: v })));

const flipAll = (h: string): string => Buffer.from(Buffer.from(h, 'hex').map((x) => x ^ 0xff)).toString('hex');

export function storageCollisionCases(): CaseInput[] {
  const a = hex(seeded('collision contract'));
  const code = hex(seeded('collision code'));
  const set = (key: string, value: string | null) => ({ contract_id: a, key, value });
  const c = (id: string, storage: [string, string][], steps: unknown[], pins: string): CaseInput => ({ id, pins, input: { contracts: [{ contract_id: a, code_hash: code, storage }], steps } });
  return [
    c('hash-collision-steps', [[KA, '01']], [set(KB, '02'), set(KA, '03'), set(KB, '04'), set(KA, null), set(KA, '05'), set(KB, null), set(KA, null)],
      'two storage keys with one FNV-1a hash stay two entries: written, updated and deleted in turn (the later one first, then the earlier), each root that of the storage as it stands'),
    { id: 'ids-differing-in-every-byte', pins: 'writes alternating between two contracts whose ids differ in every byte land in their own storage', input: { contracts: [{ contract_id: a, code_hash: code, storage: [] }, { contract_id: flipAll(a), code_hash: code, storage: [] }], steps: [set(KA, '01'), { contract_id: flipAll(a), key: KA, value: '02' }, set(KB, '03'), { contract_id: flipAll(a), key: KB, value: '04' }] } },
    c('hash-collision-prefix-keys', [[PREFIX_KEY, '01']], [set(EXTENDED_KEY, '02'), set(PREFIX_KEY, '03'), set(EXTENDED_KEY, null), set(EXTENDED_KEY, '04'), set(PREFIX_KEY, null)],
      'a storage key and the same key with bytes appended, with one FNV-1a hash, are two entries through writes, updates and deletes'),
    c('hash-collision-three-keys', [], [set(T[0]!, '01'), set(T[1]!, '02'), set(T[2]!, '03'), set(T[0]!, null), set(T[1]!, '05'), set(T[2]!, null), set(T[1]!, null)],
      'three storage keys with one FNV-1a hash stay three entries: the first written deleted while two others are in the chain, then the rest'),
    c('hash-collision-delete-first-written', [[KA, '01'], [KB, '02']], [set(KB, null), set(KB, '06'), set(KA, null), set(KB, null)],
      'of two storage keys with one FNV-1a hash, deleting either leaves the other'),
  ];
}

export function contractsCollisionCases(): CaseInput[] {
  const a = hex(seeded('collision contract'));
  const code = hex(seeded('collision code'));
  return [
    { id: 'hash-collision-keys', pins: 'two storage keys with one FNV-1a hash are two entries of the storage root', input: { contracts: [{ contract_id: a, code_hash: code, storage: [[KA, '01'], [KB, '02']] }] } },
  ];
}

export function summaryOrderCases(): CaseInput[] {
  const c = (id: string, entries: [string, string][], pins: string): CaseInput => ({ id, pins, input: { entries } });
  return [
    c('short-keys-reversed', [['01', ''], ['0000', '01'], ['00', '01']], 'keys of different lengths given out of order: sorted bytewise, a shorter prefix first'),
    c('same-first-byte-reversed', [['aa01', '01'], ['aa00', '02']], 'keys equal in their first byte, given out of order, sort by the next byte'),
    c('first-bytes-one-apart', [['0200', '01'], ['0109', '02']], 'keys whose first bytes differ by one sort by that byte, whatever follows'),
    c('prefix-after-longer', [['abcd', '01'], ['ab', '02'], ['abcdef', '03']], 'a key that is another\'s prefix sorts before it, given after it'),
  ];
}

/**
 * Trie proofs crafted to fold to the root they are checked against, so that only the rule
 * under test can refuse them: deeper than a path (257 siblings) against exactly 256, a leaf
 * path of 31 bytes, a leaf off the key's path, an absent key's leaf differing at the bit
 * right below the proof's depth or only in its last byte, and a proof 12 siblings deep
 * (its bits read from the second byte of the path).
 */
export function trieProofCraftedCases(): CaseInput[] {
  const key = seeded('crafted proof key');
  const path = triePath(key);
  const bit = (p: Uint8Array, d: number): number => ((p[d >>> 3] ?? 0) >>> (7 - (d & 7))) & 1;
  const sibs = (n: number, tag: string) => Array.from({ length: n }, (_, i) => seeded(`${tag} sibling ${i}`));
  // The root a proof folds to, as docs/STATE.md ("Proofs") folds it: the key's path bits pick each side.
  const fold = (leafPath: Uint8Array, value: Uint8Array, siblings: Uint8Array[]): Uint8Array => {
    let h = trieLeafHash(leafPath, value);
    for (let d = siblings.length - 1; d >= 0; d--) h = bit(path, d) ? trieNodeHash(siblings[d]!, h) : trieNodeHash(h, siblings[d]!);
    return h;
  };
  const flipBit = (p: Uint8Array, d: number): Uint8Array => {
    const q = new Uint8Array(p);
    q[d >>> 3]! ^= 0x80 >>> (d & 7);
    return q;
  };
  const value = Uint8Array.of(0xaa, 0x55);
  const c = (id: string, leafPath: Uint8Array, siblings: Uint8Array[], pins: string): CaseInput => ({
    id: `crafted-${id}`, pins,
    input: { root: hex(fold(leafPath, value, siblings)), key: hex(key), proof: { siblings: siblings.map(hex), leaf: { path: hex(leafPath), value: hex(value) } } },
  });
  const lastByte = new Uint8Array(path);
  lastByte[31]! ^= 1;
  return [
    c('depth-256', path, sibs(256, 'd256'), 'a proof of exactly 256 siblings (a path\'s length) that folds to the root proves the value'),
    c('depth-257', path, sibs(257, 'd257'), 'a proof of 257 siblings is refused even when it folds to the root'),
    c('leaf-path-31-bytes', path.subarray(0, 31), [], 'a leaf path of 31 bytes is refused even when it folds to the root'),
    c('leaf-off-path', flipBit(path, 1), sibs(3, 'off'), 'a leaf whose path leaves the key\'s path above the proof\'s depth is refused even when it folds to the root'),
    c('absent-differs-below-depth', flipBit(path, 3), sibs(3, 'below'), 'a leaf on the key\'s path down to the proof\'s depth (3) and off it right below proves the key absent'),
    c('absent-differs-in-last-byte', lastByte, sibs(3, 'last'), 'a leaf whose path differs from the key\'s in the last byte only proves the key absent'),
    c('depth-12', path, sibs(12, 'd12'), 'a proof of 12 siblings (bits from the path\'s second byte) that folds to the root proves the value'),
  ];
}

/** Decision leaves of other lengths than the decisions area's: two events with parameters (every event field read at its own offset). */
export function decisionLeafCases(): CaseInput[] {
  const d: Decision = {
    status: 'executed', txIndex: 7, result: { type: 'u64', value: 5n }, errorCode: null,
    events: [
      { contractId: seeded('leaf event contract 1'), name: 'Moved', params: [{ type: 'u64', value: 1n }, { type: 'key', value: seeded('leaf event key') }] },
      { contractId: seeded('leaf event contract 2'), name: 'E2', params: [{ type: 'string', value: 'two' }] },
    ],
  };
  return [{ id: 'executed-two-events', pins: 'an executed leaf with two events, each with its contract id, name and parameters at their offsets', input: { hex: hex(encodeDecision(d)) } }];
}
