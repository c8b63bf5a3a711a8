/**
 * The state commitment (docs/STATE.md): a sorted Merkle tree over active contracts, each
 * leaf committing to (contract_id, code_hash, storage_root), where storage_root is the
 * sorted Merkle tree over the contract's storage entries (key and value bytes exactly as
 * stored, src/vm/storage-layout.ts). Only contracts touched since the last root are
 * rehashed, and inside a contract only the changed paths.
 */
import { EMPTY_ROOT, SortedMerkleTree, verifyMembership, type MembershipProof } from './merkle.js';

export interface FieldProof {
  /** Proof of the contract leaf (value = code_hash || storage_root) under the state root. */
  contract: MembershipProof;
  /** Proof of the storage entry (or its absence) under storage_root. */
  storage: MembershipProof;
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
  private readonly top = new SortedMerkleTree();
  private readonly contracts = new Map<string, { id: Uint8Array; codeHash: Uint8Array; storage: SortedMerkleTree }>();
  private readonly dirty = new Set<string>();
  /** The last contract looked up, by id object: a call reads its own storage many times. */
  private lastId: Uint8Array | null = null;
  private lastKey = '';

  private idKey(id: Uint8Array): string {
    if (id !== this.lastId) {
      this.lastId = id;
      this.lastKey = hexKey(id);
    }
    return this.lastKey;
  }

  addContract(id: Uint8Array, codeHash: Uint8Array, entries: Iterable<[Uint8Array, Uint8Array]> = []): void {
    const k = hexKey(id);
    this.contracts.set(k, { id, codeHash, storage: new SortedMerkleTree(entries) });
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

  /** Sets (value) or deletes (null) one storage entry of an active contract. */
  setStorage(id: Uint8Array, key: Uint8Array, value: Uint8Array | null): void {
    const k = this.idKey(id);
    const c = this.contracts.get(k);
    if (!c) throw new Error(`state tree: storage write to unknown contract ${k}`);
    c.storage.set(key, value);
    this.dirty.add(k);
  }

  getStorage(id: Uint8Array, key: Uint8Array): Uint8Array | undefined {
    return this.contracts.get(this.idKey(id))?.storage.get(key);
  }

  root(): Uint8Array {
    for (const k of this.dirty) {
      const c = this.contracts.get(k);
      if (c) this.top.set(c.id, concat(c.codeHash, c.storage.root()));
    }
    this.dirty.clear();
    return this.top.size === 0 ? EMPTY_ROOT : this.top.root();
  }

  prove(id: Uint8Array, key: Uint8Array): FieldProof {
    this.root();
    const c = this.contracts.get(hexKey(id));
    return { contract: this.top.prove(id), storage: c ? c.storage.prove(key) : { size: 0, leaves: [] } };
  }
}

/**
 * Checks a field proof against a state root. Returns the stored value bytes, null when
 * the entry is absent, and throws when the proof does not hold.
 */
export function verifyFieldProof(stateRoot: Uint8Array, contractId: Uint8Array, key: Uint8Array, proof: FieldProof): Uint8Array | null {
  const leafValue = verifyMembership(stateRoot, contractId, proof.contract);
  if (leafValue === null) throw new Error('bad proof: contract is not in the state');
  if (leafValue.length !== 64) throw new Error('bad proof: contract leaf is not code_hash || storage_root');
  return verifyMembership(leafValue.subarray(32, 64), key, proof.storage);
}
