/**
 * The state commitment (docs/STATE.md): a Merkle trie over active contracts, each entry
 * committing to (contract_id, code_hash, storage_root), where storage_root is the Merkle
 * trie over the contract's storage entries (key and value bytes exactly as stored,
 * packages/protocol/src/vm/storage-layout.ts). Only contracts touched since the last root are rehashed, and
 * inside a contract only the paths of the entries written.
 */
import { MerkleTrie, verifyTrieProof, type TrieProof } from './trie.js';

export interface FieldProof {
  /** Proof of the contract entry (value = code_hash || storage_root) under the state root. */
  contract: TrieProof;
  /** Proof of the storage entry (or its absence) under storage_root. */
  storage: TrieProof;
}

function hexKey(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

export class StateTree {
  private readonly top = new MerkleTrie();
  private readonly contracts = new Map<string, { id: Uint8Array; codeHash: Uint8Array; storage: MerkleTrie }>();
  private readonly dirty = new Set<string>();
  /** The last contract looked up: a call reads its own storage many times. */
  private lastId: Uint8Array | null = null;
  private lastKey = '';

  private idKey(id: Uint8Array): string {
    // Callers pass copies of the same id: 32 byte compares are cheaper than the hex. The id
    // is kept as our own copy, so a caller reusing its buffer cannot change it.
    const last = this.lastId;
    let same = last !== null && last.length === id.length;
    for (let i = 0; same && i < id.length; i++) same = last![i] === id[i];
    if (!same) {
      this.lastId = new Uint8Array(id);
      this.lastKey = hexKey(id);
    }
    return this.lastKey;
  }

  addContract(id: Uint8Array, codeHash: Uint8Array, entries: Iterable<[Uint8Array, Uint8Array]> = []): void {
    const k = hexKey(id);
    this.contracts.set(k, { id, codeHash, storage: new MerkleTrie(entries) });
    this.dirty.add(k);
  }

  removeContract(id: Uint8Array): void {
    const k = hexKey(id);
    if (this.contracts.delete(k)) {
      this.dirty.delete(k);
      this.top.set(id, null);
    }
  }

  hasContract(id: Uint8Array): boolean {
    return this.contracts.has(hexKey(id));
  }

  /** Sets (value) or deletes (null) one storage entry of an active contract; returns the value it replaced. */
  setStorage(id: Uint8Array, key: Uint8Array, value: Uint8Array | null): Uint8Array | undefined {
    const k = this.idKey(id);
    const c = this.contracts.get(k);
    if (!c) throw new Error(`state tree: storage write to unknown contract ${k}`);
    this.dirty.add(k);
    return c.storage.set(key, value);
  }

  getStorage(id: Uint8Array, key: Uint8Array): Uint8Array | undefined {
    return this.contracts.get(this.idKey(id))?.storage.get(key);
  }

  root(): Uint8Array {
    for (const k of this.dirty) {
      const c = this.contracts.get(k);
      if (c) this.top.set(c.id, concat(c.codeHash, c.storage.rootHash()));
    }
    this.dirty.clear();
    return this.top.rootHash();
  }

  prove(id: Uint8Array, key: Uint8Array): FieldProof {
    this.root();
    const c = this.contracts.get(hexKey(id));
    return { contract: this.top.prove(id), storage: c ? c.storage.prove(key) : { siblings: [], leaf: null } };
  }
}

/**
 * Checks a field proof against a state root. Returns the stored value bytes, null when
 * the entry is absent, and throws when the proof does not hold.
 */
export function verifyFieldProof(stateRoot: Uint8Array, contractId: Uint8Array, key: Uint8Array, proof: FieldProof): Uint8Array | null {
  const leafValue = verifyTrieProof(stateRoot, contractId, proof.contract);
  if (leafValue === null) throw new Error('bad proof: contract is not in the state');
  if (leafValue.length !== 64) throw new Error('bad proof: contract leaf is not code_hash || storage_root');
  return verifyTrieProof(leafValue.subarray(32, 64), key, proof.storage);
}
