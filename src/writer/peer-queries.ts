/**
 * Peer data read from the writer's store (issue 8): contract summaries (docs/STATE.md,
 * "Contract summaries"), payload lists with positions, payloads in their wire form, and
 * state roots by height range. Read-only: nothing here changes the ledger.
 */
import canonicalizeModule from 'canonicalize';
import { Bucket, key, prefixEnd } from './db.js';
import { SortedMerkleTree } from '../state/merkle.js';
import { toHex } from '../protocol/hash.js';
import type { Writer } from './writer.js';
import type { ContractSummary, PayloadRef, StateRootRange, WirePayload } from '../messages.js';

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** Most heights answered by one state-root query (also the proto's documented cap). */
export const MAX_ROOT_RANGE = 1000;

/** Leaf value prefix: which kind of payload the txid anchors. */
const KIND_BYTE = { deploy: 0x01, call: 0x02 } as const;

interface IndexEntry {
  txid: string;
  kind: 'deploy' | 'call';
  contract_id: string;
  body_hash: string;
}

const u32be = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
};

/**
 * The summary tree of one contract: a sorted Merkle tree (src/state/merkle.ts) whose leaf
 * key is the txid (32 bytes) and whose value is kind (1 byte) || payload_hash (32 bytes).
 * Sorted by txid, so the root does not depend on the order payloads arrived in.
 */
export function summaryTree(entries: { txid: string; kind: 'deploy' | 'call'; payload_hash: string }[]): SortedMerkleTree {
  return new SortedMerkleTree(
    entries.map((e) => [new Uint8Array(Buffer.from(e.txid, 'hex')), new Uint8Array(Buffer.concat([Buffer.of(KIND_BYTE[e.kind]), Buffer.from(e.payload_hash, 'hex')]))]),
  );
}

export class PeerQueries {
  constructor(private readonly w: Writer) {}

  /** Every payload the node stores (deploys and calls), from the payload bucket. */
  private async index(contractId?: string): Promise<IndexEntry[]> {
    const out: IndexEntry[] = [];
    const rows = await this.w.db.range(key(Bucket.payload), prefixEnd(key(Bucket.payload)));
    for (const r of rows) {
      const v = JSON.parse(r.value.toString('utf8')) as { kind: 'deploy' | 'call'; contract_id: string; body_hash: string };
      if (contractId !== undefined && v.contract_id !== contractId) continue;
      out.push({ txid: r.key.subarray(1).toString('hex'), kind: v.kind, contract_id: v.contract_id, body_hash: v.body_hash });
    }
    return out;
  }

  async summary(contractId: string): Promise<ContractSummary | null> {
    if (!this.w.ledger.contract(contractId)) return null;
    const entries = (await this.index(contractId)).sort((a, b) => (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0));
    const tree = summaryTree(entries.map((e) => ({ txid: e.txid, kind: e.kind, payload_hash: e.body_hash })));
    return { contract_id: contractId, root: toHex(tree.root()), payloads: entries.map((e) => ({ txid: e.txid, payload_hash: e.body_hash })) };
  }

  /** Every contract's summary root in one scan of the payload bucket. */
  async roots(): Promise<Record<string, { root: string; count: number }>> {
    const by = new Map<string, { txid: string; kind: 'deploy' | 'call'; payload_hash: string }[]>();
    for (const id of this.w.ledger.contractIds()) by.set(id, []);
    for (const e of await this.index()) by.get(e.contract_id)?.push({ txid: e.txid, kind: e.kind, payload_hash: e.body_hash });
    const out: Record<string, { root: string; count: number }> = {};
    for (const [id, entries] of [...by.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) out[id] = { root: toHex(summaryTree(entries).root()), count: entries.length };
    return out;
  }

  /** The deploy first, then calls confirmed by (height, index), then pending calls by txid. */
  async txids(contractId: string): Promise<PayloadRef[] | null> {
    const l = this.w.ledger;
    const c = l.contract(contractId);
    if (!c) return null;
    const calls: PayloadRef[] = [];
    for (const e of await this.index(contractId)) {
      if (e.kind !== 'call') continue;
      const rec = await l.call(e.txid);
      calls.push({ txid: e.txid, kind: 'call', height: rec?.block_height ?? null, tx_index: rec?.tx_index ?? null });
    }
    calls.sort(comparePositions);
    return [{ txid: c.txid, kind: 'deploy', height: c.block_height, tx_index: c.tx_index }, ...calls];
  }

  async payload(txid: string): Promise<WirePayload | null> {
    const l = this.w.ledger;
    const at = await l.payloadAt(txid);
    if (!at) return null;
    if (at.kind === 'call') {
      const body = await l.callPayload(txid);
      if (!body) return null;
      return { kind: 'call', txid, contract_id: at.contract_id, body };
    }
    const c = l.contract(at.contract_id);
    if (!c) return null;
    // The registration record as REST received it; JCS so every node sends the same bytes.
    const body = canonicalize({ txid: c.txid, ...c.artifact }) ?? '';
    return { kind: 'deploy', txid, contract_id: '', body: new Uint8Array(Buffer.from(body, 'utf8')) };
  }

  async stateRoots(from: number, to: number): Promise<StateRootRange> {
    const l = this.w.ledger;
    const hi = Math.min(to, from + MAX_ROOT_RANGE - 1, 0xfffffffe);
    const roots: StateRootRange['roots'] = [];
    if (hi >= from) {
      for (const r of await this.w.db.range(key(Bucket.stateRoot, u32be(from)), key(Bucket.stateRoot, u32be(hi + 1)))) {
        roots.push(JSON.parse(r.value.toString('utf8')) as StateRootRange['roots'][number]);
      }
    }
    return { roots, anchor_height: l.anchor?.height ?? null, tip_height: l.tip?.height ?? null };
  }
}

/** Confirmed before pending; confirmed by (height, tx_index); pending by txid. */
export function comparePositions(a: PayloadRef, b: PayloadRef): number {
  if (a.height !== null && b.height !== null) return a.height - b.height || (a.tx_index ?? 0) - (b.tx_index ?? 0);
  if (a.height !== null) return -1;
  if (b.height !== null) return 1;
  return a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0;
}
