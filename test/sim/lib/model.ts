/**
 * A small reference model of PROTOCOL sections 4 and 5, written apart from the ledger:
 * given the best chain and every payload held, it decides each call in position order
 * and computes the state root at every height from scratch, with a trie written from
 * docs/STATE.md (no incremental bookkeeping, no undo logs, no replays, no arrival order).
 * The VM is shared: the model is of ordering and outcomes, not of the instruction set.
 */
import { Transaction } from 'bitcoinjs-lib';
import { taggedHash, toHex } from '../../../src/protocol/hash.js';
import { findStamp } from '../../../src/protocol/stamp.js';
import { checkCallBindingWithStamp } from '../../../src/protocol/binding.js';
import { contractId as deriveContractId } from '../../../src/protocol/contract.js';
import { envelopeHash } from '../../../src/protocol/envelope.js';
import { execute } from '../../../src/vm/execute.js';
import { verifyArtifact } from '../../../src/vm/verifier.js';
import type { Program } from '../../../src/vm/types.js';
import { outpointOf, type Payload, type SimBlock } from '../../helpers/sim-world.js';

export interface ModelCall {
  status: 'pending' | 'executed' | 'failed' | 'invalid' | 'dropped';
  block_height: number | null;
  tx_index: number | null;
  error: string | null;
}

export interface ModelEvent {
  contract_id: string;
  txid: string;
  block_height: number;
  tx_index: number;
  log_index: number;
  name: string;
}

export interface ModelResult {
  roots: string[]; // by height, from 0
  calls: Map<string, ModelCall>;
  events: ModelEvent[];
  active: Map<string, { height: number; txIndex: number }>;
}

const ZERO = new Uint8Array(32);

/** docs/STATE.md: the binary trie root over (key, value) entries, from scratch. */
export function trieRoot(entries: [Uint8Array, Uint8Array][]): Uint8Array {
  const withPaths = entries.map(([k, v]) => ({ path: taggedHash('SVC/path', k), value: v }));
  const bit = (p: Uint8Array, d: number): number => (p[d >> 3]! >> (7 - (d & 7))) & 1;
  const rec = (xs: typeof withPaths, depth: number): Uint8Array => {
    if (xs.length === 0) return ZERO;
    if (xs.length === 1) return taggedHash('SVC/leaf', xs[0]!.path, xs[0]!.value);
    const left = xs.filter((x) => bit(x.path, depth) === 0);
    const right = xs.filter((x) => bit(x.path, depth) === 1);
    return taggedHash('SVC/node', rec(left, depth + 1), rec(right, depth + 1));
  };
  return rec(withPaths, 0);
}

export function runModel(chain: readonly SimBlock[], held: readonly Payload[]): ModelResult {
  const deploys = new Map<string, Payload & { kind: 'deploy' }>(); // by txid
  const calls = new Map<string, Payload & { kind: 'call' }>(); // by txid
  for (const p of held) {
    if (p.kind === 'deploy') deploys.set(p.txid, p);
    else calls.set(p.txid, p);
  }
  const decided = new Map<string, ModelCall>();
  const active = new Map<string, { height: number; txIndex: number; codeHash: Uint8Array; program: Program; id: Uint8Array }>();
  const storage = new Map<string, Map<string, Uint8Array>>(); // contract -> hex key -> value
  const claims = new Set<string>();
  const events: ModelEvent[] = [];
  const roots: string[] = [];

  const root = (): string => {
    const top: [Uint8Array, Uint8Array][] = [];
    for (const [cid, c] of active) {
      const st = [...(storage.get(cid) ?? new Map<string, Uint8Array>())].map(([k, v]): [Uint8Array, Uint8Array] => [Buffer.from(k, 'hex'), v]);
      top.push([c.id, Buffer.concat([c.codeHash, trieRoot(st)])]);
    }
    return toHex(trieRoot(top));
  };

  roots.push(root());
  for (const b of chain.slice(1)) {
    const h = b.height;
    // Section 5: a pending call whose outpoint another confirmed transaction spends is dropped.
    for (const tx of b.txs.slice(1)) {
      for (const i of tx.ins) {
        const op = outpointOf(i);
        for (const c of calls.values()) {
          if (c.outpoint === op && !decided.has(c.txid) && c.txid !== tx.getId()) decided.set(c.txid, { status: 'dropped', block_height: null, tx_index: null, error: null });
        }
      }
    }
    // Section 4: everything in position order.
    b.txs.forEach((tx: Transaction, txIndex: number) => {
      const txid = tx.getId();
      const stamp = findStamp(tx);
      if (stamp.ok && stamp.stamp.kind === 'deploy') {
        const d = deploys.get(txid);
        const cid = toHex(deriveContractId(Buffer.from(txid, 'hex'), stamp.stamp.codeHash));
        if (d && d.record.contract_id === cid && !active.has(cid)) {
          const v = verifyArtifact(d.record.artifact as never);
          if (!v.ok) throw new Error('model: artifact does not verify');
          active.set(cid, { height: h, txIndex, codeHash: stamp.stamp.codeHash, program: v.program, id: Buffer.from(cid, 'hex') });
          storage.set(cid, new Map());
        }
      }
      const c = calls.get(txid);
      if (!c || decided.has(txid)) return;
      const at = (status: ModelCall['status'], error: string | null): void => void decided.set(txid, { status, block_height: h, tx_index: txIndex, error });
      if (!stamp.ok) return at('invalid', 'anchor_mismatch');
      if (!checkCallBindingWithStamp(tx, stamp, c.envelope, envelopeHash(c.envelope)).ok) return at('invalid', 'anchor_mismatch');
      const con = active.get(c.record.contract_id);
      if (!con || con.height > h || (con.height === h && con.txIndex >= txIndex)) return at('invalid', 'unknown_contract');
      const claim = `${c.record.caller}:${c.record.call_id}`;
      if (claims.has(claim)) return at('invalid', 'duplicate_call_id');
      claims.add(claim);
      const e = c.envelope;
      const out = execute({
        contractId: e.contractId,
        function: e.function,
        args: e.args,
        context: { height: h, txid: Buffer.from(txid, 'hex'), inputs: tx.ins.map((i) => ({ txid: Uint8Array.from(i.hash).reverse(), vout: i.index })), outputs: tx.outs, caller: e.caller, callId: e.callId },
        host: {
          program: (id) => active.get(toHex(id))?.program,
          storageGet: (id, k) => storage.get(toHex(id))?.get(toHex(k)),
          storageSize: (id) => {
            let n = 0;
            for (const [k, v] of storage.get(toHex(id)) ?? []) n += k.length / 2 + v.length;
            return n;
          },
        },
      });
      if (out.status === 'failed') return at('failed', out.code);
      for (const w of out.writes) {
        const st = storage.get(toHex(w.contractId))!;
        if (w.value) st.set(toHex(w.key), Uint8Array.from(w.value));
        else st.delete(toHex(w.key));
      }
      out.events.forEach((ev, logIndex) => events.push({ contract_id: toHex(ev.contractId), txid, block_height: h, tx_index: txIndex, log_index: logIndex, name: ev.name }));
      at('executed', null);
    });
    roots.push(root());
  }
  const all = new Map<string, ModelCall>();
  for (const txid of calls.keys()) all.set(txid, decided.get(txid) ?? { status: 'pending', block_height: null, tx_index: null, error: null });
  return { roots, calls: all, events, active: new Map([...active].map(([k, v]) => [k, { height: v.height, txIndex: v.txIndex }])) };
}
