/**
 * A small reference model of PROTOCOL sections 4 and 5, written apart from the ledger:
 * given the best chain and every payload held, it decides each call in position order
 * and computes the state root at every height from scratch, with a trie and decision
 * leaves written from docs/STATE.md (no incremental bookkeeping, no undo logs, no
 * replays, no arrival order).
 * The VM is shared: the model is of ordering and outcomes, not of the instruction set.
 */
import type { Transaction } from 'bitcoinjs-lib';
import { taggedHash, toHex } from '@svc-node/protocol/hash';
import { findStamp } from '@svc-node/protocol/stamp';
import { checkCallBindingWithStamp } from '@svc-node/protocol/binding';
import { contractId as deriveContractId } from '@svc-node/protocol/contract';
import { envelopeHash } from '@svc-node/protocol/envelope';
import { execute } from '../../../src/vm/execute.js';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';
import type { Program } from '@svc-node/protocol/vm/types';
import type { Value } from '@svc-node/protocol/value';
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

/** docs/STATE.md, "Decisions": a typed value as a decision leaf writes it. */
function valueBytesOf(v: Value): Buffer {
  const tag = Buffer.of(['u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key'].indexOf(v.type));
  const u32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  switch (v.type) {
    case 'u64':
    case 'i64':
    case 'u128': {
      const width = v.type === 'u128' ? 16 : 8;
      const n = BigInt.asUintN(width * 8, v.value);
      return Buffer.concat([tag, Buffer.from(n.toString(16).padStart(width * 2, '0'), 'hex')]);
    }
    case 'bool':
      return Buffer.concat([tag, Buffer.of(v.value ? 1 : 0)]);
    case 'key':
      return Buffer.concat([tag, Buffer.from(v.value)]);
    case 'string':
      return Buffer.concat([tag, u32(Buffer.byteLength(v.value)), Buffer.from(v.value, 'utf8')]);
    case 'bytes':
      return Buffer.concat([tag, u32(v.value.length), Buffer.from(v.value)]);
  }
}

/** docs/STATE.md, "Decisions": the leaf of one call whose anchor the block confirmed (a drop has none). */
function decisionLeaf(status: 'executed' | 'failed' | 'invalid', txIndex: number, out: { result: Value | null; events: { contractId: Uint8Array; name: string; params: readonly Value[] }[] } | null, code: string | null): Buffer {
  const parts: Buffer[] = [Buffer.of({ executed: 1, failed: 2, invalid: 3 }[status])];
  const u16 = (n: number): Buffer => Buffer.of(n >> 8, n & 0xff);
  const b = Buffer.alloc(4);
  b.writeUInt32BE(txIndex);
  parts.push(b);
  if (status === 'executed') {
    parts.push(out!.result ? Buffer.concat([Buffer.of(1), valueBytesOf(out!.result)]) : Buffer.of(0));
    const n = Buffer.alloc(4);
    n.writeUInt32BE(out!.events.length);
    parts.push(n);
    for (const e of out!.events) parts.push(Buffer.from(e.contractId), u16(Buffer.byteLength(e.name)), Buffer.from(e.name, 'utf8'), u16(e.params.length), ...e.params.map(valueBytesOf));
  } else parts.push(u16(Buffer.byteLength(code!)), Buffer.from(code!, 'utf8'));
  return Buffer.concat(parts);
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

  const contractsRoot = (): Uint8Array => {
    const top: [Uint8Array, Uint8Array][] = [];
    for (const [cid, c] of active) {
      const st = [...(storage.get(cid) ?? new Map<string, Uint8Array>())].map(([k, v]): [Uint8Array, Uint8Array] => [Buffer.from(k, 'hex'), v]);
      top.push([c.id, Buffer.concat([c.codeHash, trieRoot(st)])]);
    }
    return trieRoot(top);
  };
  /** docs/STATE.md, "The state root": the block's decisions folded in under root version 3. */
  const root = (blockDecisions: [Uint8Array, Uint8Array][]): string => toHex(taggedHash('SVC/root', Buffer.of(3), contractsRoot(), trieRoot(blockDecisions)));

  // The journal's anchor: no block applied, the empty root.
  roots.push(toHex(contractsRoot()));
  for (const b of chain.slice(1)) {
    const h = b.height;
    const blockDecisions: [Uint8Array, Uint8Array][] = [];
    // Section 5: a pending call whose outpoint another confirmed transaction spends is
    // dropped. No leaf: a drop depends on the payloads a node holds (docs/STATE.md, "Decisions").
    for (const tx of b.txs.slice(1)) {
      for (const i of tx.ins) {
        const op = outpointOf(i);
        for (const c of calls.values()) {
          if (c.outpoint === op && !decided.has(c.txid) && c.txid !== tx.getId()) {
            decided.set(c.txid, { status: 'dropped', block_height: null, tx_index: null, error: null });
          }
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
      const at = (status: Parameters<typeof decisionLeaf>[0], error: string | null, out: Parameters<typeof decisionLeaf>[2] = null): void => {
        decided.set(txid, { status, block_height: h, tx_index: txIndex, error });
        // Only executed and failed calls are committed (docs/STATE.md, "Decisions").
        if (status !== 'invalid') blockDecisions.push([Buffer.from(txid, 'hex'), decisionLeaf(status, txIndex, out, error)]);
      };
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
      at('executed', null, out);
    });
    roots.push(root(blockDecisions));
  }
  const all = new Map<string, ModelCall>();
  for (const txid of calls.keys()) all.set(txid, decided.get(txid) ?? { status: 'pending', block_height: null, tx_index: null, error: null });
  return { roots, calls: all, events, active: new Map([...active].map(([k, v]) => [k, { height: v.height, txIndex: v.txIndex }])) };
}
