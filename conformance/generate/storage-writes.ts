/**
 * roots.storage-writes: a state changed in place, step after step, as blocks change it
 * (docs/STATE.md, "State root"): after every step the contracts root must be the root of
 * the storage as it then stands, built from nothing (roots.contracts). Deleting an entry
 * (a write of its type's default value) leaves the root it would have had if it was
 * never written; so does removing a contract (a reorganisation undoing its deploy).
 * Added because the mutation run found the state trie's delete and update paths
 * unpinned: nothing else changes a trie after it is built.
 */
import { hex, type CaseInput } from './kit.js';
import { seeded } from './keys.js';

const id = (s: string) => hex(seeded(s));

export function storageWriteCases(): CaseInput[] {
  const a = id('writes contract a');
  const code = id('writes code');
  // Contract ids that differ only in their last byte: the tree's last-id memo must tell them apart.
  const b = a.slice(0, 62) + (a.slice(62) === 'ff' ? '00' : 'ff');
  // 24 keys of mixed lengths (one byte to 32), so the trie has deep and shallow branches.
  const keys = Array.from({ length: 24 }, (_, i) => hex(seeded(`writes key ${i}`).subarray(0, 1 + ((i * 5) % 32))));
  const entries: [string, string][] = keys.map((k, i) => [k, hex(Uint8Array.of(i, 0xa5))]);
  const set = (contract_id: string, key: string, value: string | null) => ({ contract_id, key, value });
  const c = (caseId: string, contracts: unknown[], steps: unknown[], pins: string): CaseInput => ({ id: caseId, pins, input: { contracts, steps } });
  const full = [{ contract_id: a, code_hash: code, storage: entries }];
  // Deleting every entry in three different orders walks each collapse of the trie.
  const orders: [string, number[]][] = [
    ['in-order', keys.map((_, i) => i)],
    ['reverse', keys.map((_, i) => keys.length - 1 - i)],
    ['interleaved', keys.map((_, i) => (i * 7) % keys.length)],
  ];
  return [
    ...orders.map(([name, order]) => c(`delete-all-${name}`, full, order.map((i) => set(a, keys[i]!, null)), `every entry deleted one at a time (${name}): after each, the root of what is left; the last root is that of a contract with empty storage`)),
    c('insert-one-at-a-time', [{ contract_id: a, code_hash: code, storage: [] }], entries.map(([k, v]) => set(a, k, v)), 'entries written one at a time into empty storage: after each, the root of the entries so far'),
    c('update-in-place', full, entries.map(([k], i) => set(a, k, hex(Uint8Array.of(0xff - i)))), 'every value changed in place: after each, the root of the storage as it stands'),
    c('delete-absent-key', full, [set(a, hex(seeded('writes absent key')), null), set(a, '00'.repeat(33), null)], 'deleting a key that is not there changes nothing'),
    c('delete-then-write-again', full, [set(a, keys[3]!, null), set(a, keys[3]!, entries[3]![1]), set(a, keys[5]!, null), set(a, keys[5]!, 'beef')], 'an entry deleted and written again has the root of never having been deleted (and another value another root)'),
    c('empty-value-is-an-entry', [{ contract_id: a, code_hash: code, storage: [['01', '02']] }], [set(a, '02', ''), set(a, '02', null)], 'an empty value is an entry (only a deletion removes one)'),
    c('two-contracts-alternating', [{ contract_id: a, code_hash: code, storage: entries.slice(0, 4) }, { contract_id: b, code_hash: code, storage: entries.slice(4, 8) }], [set(a, keys[0]!, null), set(b, keys[4]!, null), set(a, keys[1]!, 'aa'), set(b, keys[5]!, 'bb'), set(b, keys[9]!, 'cc'), set(a, keys[9]!, 'dd')], 'writes alternating between two contracts whose ids differ in the last byte land in their own storage'),
    c('remove-contract', [{ contract_id: a, code_hash: code, storage: entries.slice(0, 3) }, { contract_id: b, code_hash: code, storage: entries.slice(3, 6) }], [{ remove_contract: b }, set(a, keys[0]!, 'ee'), { remove_contract: id('writes never deployed') }, { remove_contract: a }], 'a removed contract leaves the root of never having been deployed; removing one never deployed changes nothing; removing the last gives 32 zero bytes'),
    c('remove-and-deploy-again', [{ contract_id: a, code_hash: code, storage: entries.slice(0, 3) }], [{ remove_contract: a }, { add_contract: a, code_hash: code }, set(a, keys[0]!, entries[0]![1])], 'a contract removed and deployed again starts from empty storage'),
  ];
}
