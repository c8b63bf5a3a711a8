/**
 * svc-node's answers to the conformance operations (conformance/README.md, "Operations"):
 * one function per vector file, taking a case's `input` and returning its `output`. The
 * generator fills every case's `expected` with these answers (the reference fills the
 * fixtures, as in Ethereum's execution-spec-tests), and the command-line adapter
 * (svc-node.mjs) answers the runner with them. Only the node's own functions decide:
 * this file translates JSON to their arguments and their results back to JSON.
 */
import { NodeError } from '@svc-node/protocol/errors';
import { parseHex, sha256, toHex } from '@svc-node/protocol/hash';
import { isValueType, typedValueFromJson, typedValueToJson, valueBytes, valueFromJson, writeValue, type Value } from '@svc-node/protocol/value';
import { decodeEnvelope, encodeEnvelope, envelopeFromJson, envelopeHash, envelopeToJson, receivedSigningMessage } from '@svc-node/protocol/envelope';
import { verifySchnorrFast } from '@svc-node/protocol/schnorr';
import { codeHash, contractId, type ArtifactCore } from '@svc-node/protocol/contract';
import { findStampInOutputs } from '@svc-node/protocol/stamp';
import { checkCallBinding, checkDeployBinding } from '@svc-node/protocol/binding';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';
import { MerkleTrie, verifyTrieProof } from '@svc-node/protocol/state/trie';
import { StateTree } from '@svc-node/protocol/state/state-tree';
import { SortedMerkleTree } from '../../src/state/merkle.js';
import { callVerdict, refusalIsRetryable } from '@svc-node/protocol/rules';
import { decodeDecision, decisionsRoot, encodeDecision, stateRootOf, type Decision, type DecidedStatus } from '@svc-node/protocol/state/decisions';
import { foldBranch, merkleRoot } from '@svc-node/protocol/merkle-branch';
import { parseRawBlock } from '@svc-node/protocol/bitcoin';
import { execute } from '../../src/vm/execute.js';
import { MemHost } from '../../src/vm/mem-host.js';
import type { ExecResult, TraceHook } from '@svc-node/protocol/vm/types';
import { decodeCompact, encodeCompact, nextWorkRequired, parseHeader80, verifyHeaderRun } from '@svc-node/protocol/headers';
import { journalAnchorHeight, networkParams } from '@svc-node/protocol/activation';
import { Verifier, signingBytes, verifyIdentityProof } from '../../src/gossip/auth.js';
import type { PeerMethod } from '../../src/gossip/protocols.js';
import { historyRun } from './svc-node-history.js';
import { checkEvidence, coinbaseDepth, inclusionMatchesHeader, parseProven, type Evidence, type Inclusion } from '@svc-node/protocol/evidence';

/** What an operation answers: `output` is compared with a case's `expected`; `note` is for people only. */
export interface Answer {
  output: unknown;
  note?: string;
}

type Json = Record<string, unknown>;
type Operation = (input: Json) => Answer;

/** Hex -> bytes for inputs the vectors hold; a malformed vector is the kit's bug, so it throws. */
function bytes(hex: unknown, what: string): Uint8Array {
  const b = typeof hex === 'string' ? parseHex(hex) : null;
  if (!b) throw new Error(`input ${what} is not lowercase hex`);
  return b;
}

/** A refusal as the node states it: its stable code and, where it names one, the field. */
function refusal(e: unknown): Answer {
  if (!(e instanceof NodeError)) throw e;
  const field = typeof e.detail?.field === 'string' ? e.detail.field : undefined;
  return { output: field === undefined ? { ok: false, code: e.code } : { ok: false, code: e.code, field }, note: e.message };
}

/** A refusal the protocol states without an error code: only that it is refused counts; the reason is the note. */
function refused(reason: string): Answer {
  return { output: { ok: false }, note: reason };
}

function valueHex(v: Value): string {
  const out = Buffer.alloc(valueBytes(v));
  writeValue(out, 0, v);
  return out.toString('hex');
}

function inclusion(j: unknown): Inclusion {
  const o = j as Json;
  return { blockHash: o.block_hash as string, height: o.height as number, txIndex: o.tx_index as number, branch: (o.branch as string[]).map((h, i) => bytes(h, `branch[${i}]`)) };
}

/** A payload's evidence from its JSON form `{anchor_tx, confirmed, spent_by}` (evidence.check's input; also a history step's `evidence`). */
export function evidenceFromJson(ev: Json): Evidence {
  const spent = (ev.spent_by ?? null) as Json | null;
  return {
    anchorTx: bytes(ev.anchor_tx, 'anchor_tx'),
    confirmed: (ev.confirmed ?? null) === null ? null : inclusion(ev.confirmed),
    spentBy: spent === null ? null : {
      tx: bytes(spent.tx, 'spent_by.tx'),
      vin: spent.vin as number,
      at: inclusion(spent.at),
      ...(spent.block_txids_internal ? { blockTxids: (spent.block_txids_internal as string[]).map((h, i) => bytes(h, `block_txids_internal[${i}]`)) } : {}),
    },
  };
}

/** Runs an `execution.call` input on an in-memory host; `trace` sees every instruction (the generator's opcode census). */
export function executeCase(input: Json, trace?: TraceHook): ExecResult {
  const host = new MemHost();
  for (const c of input.contracts as Json[]) {
    const id = bytes(c.contract_id, 'contract_id');
    host.deploy(id, c.artifact as ArtifactCore);
    const m = new Map<string, Uint8Array>();
    for (const [k, v] of c.storage as [string, string][]) m.set(k, bytes(v, 'storage value'));
    host.store.set(c.contract_id as string, m);
  }
  const call = input.call as Json;
  const ctx = input.context as Json;
  const request = {
    contractId: bytes(call.contract_id, 'call.contract_id'),
    function: call.function as string,
    args: (call.args as unknown[]).map((a, i) => typedValueFromJson(a, `args[${i}]`)),
    context: {
      height: ctx.height as number,
      txid: bytes(ctx.txid, 'context.txid'),
      caller: bytes(ctx.caller, 'context.caller'),
      callId: BigInt(ctx.call_id as string),
      inputs: (ctx.inputs as Json[]).map((i) => ({ txid: bytes(i.txid, 'input txid'), vout: i.vout as number })),
      outputs: (ctx.outputs as Json[]).map((o) => ({ value: BigInt(o.value as string), script: bytes(o.script, 'output script') })),
    },
    host,
  };
  return execute(request, trace ? { trace } : undefined);
}

const operations: Record<string, Operation> = {
  'codec.value-binary': (input) => {
    try {
      if (!isValueType(input.type)) throw new NodeError('bad_request', `unknown value type ${JSON.stringify(input.type)}`);
      return { output: { ok: true, hex: valueHex(valueFromJson(input.type, input.value)) } };
    } catch (e) {
      return refusal(e);
    }
  },

  'codec.envelope-decode': (input) => {
    try {
      const raw = bytes(input.hex, 'hex');
      const e = decodeEnvelope(raw);
      // As intake reads a payload (openEnvelope): m hashed over the bytes as received, not
      // re-encoded from the decoded fields (which would refuse again what the decoder let by).
      const message = receivedSigningMessage(raw);
      return {
        output: {
          ok: true,
          envelope: envelopeToJson(e),
          envelope_hash: toHex(envelopeHash(raw)),
          signing_message: toHex(message),
          signature_valid: verifySchnorrFast(e.signature, message, e.caller),
        },
      };
    } catch (e) {
      return refusal(e);
    }
  },

  'codec.envelope-encode': (input) => {
    try {
      const e = envelopeFromJson(input.envelope);
      const raw = encodeEnvelope(e);
      return { output: { ok: true, bytes: raw.length, envelope_hash: toHex(envelopeHash(raw)), sha256_of_bytes: toHex(sha256(raw)) } };
    } catch (e) {
      return refusal(e);
    }
  },

  'codec.artifact': (input) => {
    try {
      const hash = codeHash(input.artifact as ArtifactCore);
      return { output: { ok: true, code_hash: toHex(hash), contract_id: toHex(contractId(bytes(input.deploy_txid, 'deploy_txid'), hash)) } };
    } catch (e) {
      return refusal(e);
    }
  },

  'binding.stamp': (input) => {
    const r = findStampInOutputs((input.outputs as string[]).map((s, i) => bytes(s, `outputs[${i}]`)));
    if (!r.ok) return { output: { ok: false, reason: r.reason } };
    const s = r.stamp;
    return {
      output: s.kind === 'deploy'
        ? { ok: true, kind: 'deploy', vout: s.vout, code_hash: toHex(s.codeHash) }
        : { ok: true, kind: 'call', vout: s.vout, contract_id: toHex(s.contractId), envelope_hash: toHex(s.envelopeHash) },
    };
  },

  'binding.call': (input) => {
    try {
      const r = checkCallBinding(input.tx_hex as string, decodeEnvelope(bytes(input.envelope_hex, 'envelope_hex')));
      return { output: r.ok ? { binds: true, stamp_vout: r.stampVout } : { binds: false, reason: r.reason } };
    } catch (e) {
      return refusal(e);
    }
  },

  'binding.deploy': (input) => {
    try {
      const r = checkDeployBinding(input.tx_hex as string, bytes(input.code_hash, 'code_hash'));
      return { output: r.ok ? { binds: true, stamp_vout: r.stampVout } : { binds: false, reason: r.reason } };
    } catch (e) {
      return refusal(e);
    }
  },

  'verifier.artifact': (input) => {
    const r = verifyArtifact(input.artifact as ArtifactCore);
    return r.ok ? { output: { accepted: true } } : { output: { accepted: false, offset: r.offset }, note: r.reason };
  },

  'roots.contracts': (input) => {
    const tree = new StateTree();
    const storageRoots: Record<string, string> = {};
    for (const c of input.contracts as Json[]) {
      const entries = (c.storage as [string, string][]).map(([k, v], i): [Uint8Array, Uint8Array] => [bytes(k, `storage[${i}] key`), bytes(v, `storage[${i}] value`)]);
      tree.addContract(bytes(c.contract_id, 'contract_id'), bytes(c.code_hash, 'code_hash'), entries);
      storageRoots[c.contract_id as string] = toHex(new MerkleTrie(entries).rootHash());
    }
    return { output: { contracts_root: toHex(tree.root()), storage_roots: storageRoots } };
  },

  'roots.decisions': (input) => {
    const leaves: [Uint8Array, Uint8Array][] = [];
    const leafHex: Record<string, string> = {};
    for (const d of input.decisions as Json[]) {
      const decision: Decision = {
        status: d.status as DecidedStatus,
        txIndex: d.tx_index as number,
        result: d.result === null ? null : typedValueFromJson(d.result),
        errorCode: d.error_code as string | null,
        events: (d.events as Json[]).map((e) => ({ contractId: bytes(e.contract_id, 'event contract_id'), name: e.name as string, params: (e.params as unknown[]).map((p) => typedValueFromJson(p)) })),
      };
      const leaf = encodeDecision(decision);
      leaves.push([bytes(d.txid, 'txid'), leaf]);
      leafHex[d.txid as string] = leaf.toString('hex');
    }
    const root = decisionsRoot(leaves);
    return { output: { leaves: leafHex, decisions_root: toHex(root), state_root: toHex(stateRootOf(bytes(input.contracts_root, 'contracts_root'), root)) } };
  },

  'roots.storage-writes': (input) => {
    // The node's own path: one state tree kept across the steps (as the writer keeps it
    // across blocks), each step applied to it in place, the root asked after every step.
    const tree = new StateTree();
    for (const c of input.contracts as Json[]) {
      tree.addContract(bytes(c.contract_id, 'contract_id'), bytes(c.code_hash, 'code_hash'), (c.storage as [string, string][]).map(([k, v], i): [Uint8Array, Uint8Array] => [bytes(k, `storage[${i}] key`), bytes(v, `storage[${i}] value`)]));
    }
    const roots = [toHex(tree.root())];
    for (const [i, step] of (input.steps as Json[]).entries()) {
      if (step.remove_contract !== undefined) tree.removeContract(bytes(step.remove_contract, `steps[${i}].remove_contract`));
      else if (step.add_contract !== undefined) tree.addContract(bytes(step.add_contract, `steps[${i}].add_contract`), bytes(step.code_hash, `steps[${i}].code_hash`));
      else tree.setStorage(bytes(step.contract_id, `steps[${i}].contract_id`), bytes(step.key, `steps[${i}].key`), step.value === null ? null : bytes(step.value, `steps[${i}].value`));
      roots.push(toHex(tree.root()));
    }
    return { output: { contracts_roots: roots } };
  },

  'roots.summary': (input) => {
    const tree = new SortedMerkleTree((input.entries as [string, string][]).map(([k, v], i): [Uint8Array, Uint8Array] => [bytes(k, `entries[${i}] key`), bytes(v, `entries[${i}] value`)]));
    return { output: { root: toHex(tree.root()) } };
  },

  'roots.trie-proof': (input) => {
    const p = input.proof as Json;
    const leaf = p.leaf as Json | null;
    try {
      const v = verifyTrieProof(bytes(input.root, 'root'), bytes(input.key, 'key'), {
        siblings: (p.siblings as string[]).map((h, i) => bytes(h, `siblings[${i}]`)),
        leaf: leaf === null ? null : { path: bytes(leaf.path, 'leaf.path'), value: bytes(leaf.value, 'leaf.value') },
      });
      return { output: { ok: true, value: v === null ? null : toHex(v) } };
    } catch (e) {
      return refused((e as Error).message);
    }
  },

  'blocks.parse': (input) => {
    try {
      const b = parseRawBlock(bytes(input.block_hex, 'block_hex'), input.expected_hash === null ? undefined : (input.expected_hash as string));
      return { output: { ok: true, hash: b.hash, txids: b.txids } };
    } catch (e) {
      return refused((e as Error).message);
    }
  },

  'evidence.merkle-root': (input) => {
    const r = merkleRoot((input.txids_internal as string[]).map((h, i) => bytes(h, `txids_internal[${i}]`)));
    return { output: { root_internal: toHex(r.root), mutated: r.mutated } };
  },

  'evidence.branch-fold': (input) => {
    const r = foldBranch(bytes(input.leaf_internal, 'leaf_internal'), input.index as number, (input.branch as string[]).map((h, i) => bytes(h, `branch[${i}]`)));
    return r.ok ? { output: { ok: true, root_internal: toHex(r.root) } } : refused(r.reason);
  },

  'evidence.proven-tx': (input) => {
    const r = parseProven(bytes(input.tx_hex, 'tx_hex'));
    return r.ok ? { output: { ok: true, txid: r.txid } } : refused(r.reason);
  },

  'evidence.check': (input) => {
    const evidence = evidenceFromJson(input.evidence as Json);
    const r = checkEvidence(input.claimed_txid as string, input.outpoint as { txid: string; vout: number } | null, evidence);
    if (!r.ok) return { output: { ok: false, code: r.code, field: r.field }, note: r.reason };
    return {
      output: {
        ok: true,
        confirmed_root_internal: r.confirmedRoot ? toHex(r.confirmedRoot) : null,
        spender_root_internal: r.spenderRoot ? toHex(r.spenderRoot) : null,
        spender_txid: r.spenderTxid,
        spender_unproven: r.spenderUnproven,
      },
    };
  },

  'headers.compact': (input) => {
    const d = decodeCompact(input.bits as number);
    return { output: { target: d.target.toString(16), negative: d.negative, overflow: d.overflow, compact: d.negative || d.overflow ? null : encodeCompact(d.target) } };
  },

  'headers.next-work': (input) => {
    const pow = networkParams(input.genesis_hash as string).pow;
    return { output: { bits: nextWorkRequired(input.first as { timestamp: number; bits: number }, input.last as { timestamp: number; bits: number }, pow) } };
  },

  'headers.network': (input) => {
    const n = networkParams(input.genesis_hash as string);
    const p = n.pow;
    return {
      output: {
        network: n.network,
        activation_height: n.height,
        journal_anchor_height: journalAnchorHeight(input.genesis_hash as string, null),
        pow_limit: p.powLimit.toString(16),
        retarget_interval: p.retargetInterval,
        target_timespan: p.targetTimespan,
        target_spacing: p.targetSpacing,
        allow_min_difficulty: p.allowMinDifficulty,
        enforce_bip94: p.enforceBIP94,
      },
    };
  },

  'headers.run': (input) => {
    const pow = networkParams(input.genesis_hash as string).pow;
    const start = input.start as Json;
    const header = (h: unknown, what: string) => parseHeader80(bytes(h, what));
    const r = verifyHeaderRun(
      { height: start.height as number, prev: start.prev === null ? null : header(start.prev, 'start.prev'), periodFirst: start.period_first === null ? null : header(start.period_first, 'start.period_first') },
      (input.run as string[]).map((h, i) => header(h, `run[${i}]`)),
      pow,
    );
    return r.ok ? { output: { ok: true } } : { output: { ok: false, index: r.index }, note: r.reason };
  },

  'peer.verify': (input) => {
    const req = input.request as Json;
    const auth = req.auth as Json | null;
    const r = new Verifier(bytes(input.receiver_public_key, 'receiver_public_key')).verify(
      input.method as PeerMethod,
      {
        body: bytes(req.body, 'body'),
        auth: auth === null ? null : { public_key: bytes(auth.public_key, 'public_key'), signature: bytes(auth.signature, 'signature'), sent_at_ms: auth.sent_at_ms as string, receiver_public_key: bytes(auth.receiver_public_key, 'receiver_public_key') },
      },
      input.now_ms as number,
    );
    return r.ok ? { output: { ok: true, sender: r.key } } : { output: { ok: false }, note: r.reason };
  },

  'peer.signing-bytes': (input) => ({
    output: { hex: toHex(signingBytes(input.method as string, bytes(input.receiver_public_key, 'receiver'), bytes(input.sender_public_key, 'sender'), BigInt(input.sent_at_ms as string), bytes(input.body, 'body'))) },
  }),

  'peer.identity-proof': (input) => ({
    output: { valid: verifyIdentityProof(bytes(input.public_key, 'public_key'), bytes(input.challenge, 'challenge'), bytes(input.signature, 'signature')) },
  }),

  'decision.call-verdict': (input) => {
    const pos = (p: unknown) => ({ height: (p as Json).height as number, txIndex: (p as Json).tx_index as number });
    const b = input.binding as Json | null;
    const r = callVerdict({
      binding: b === null ? null : b.ok === true ? { ok: true, stampVout: b.stamp_vout as number } : { ok: false, reason: b.reason as never },
      deployAt: input.deploy_at === null ? null : pos(input.deploy_at),
      at: pos(input.at),
      claimTaken: input.claim_taken as boolean,
    });
    return r.execute ? { output: { execute: true } } : { output: { execute: false, code: r.code }, note: r.message };
  },

  'decision.intake-refusal': (input) => ({ output: { retryable: refusalIsRetryable(input.code as string) } }),

  'decision.leaf-decode': (input) => {
    let d: Decision;
    try {
      d = decodeDecision(bytes(input.hex, 'hex'));
    } catch (e) {
      return refused((e as Error).message);
    }
    return {
      output: {
        ok: true,
        status: d.status,
        tx_index: d.txIndex,
        result: d.result === null ? null : typedValueToJson(d.result),
        error_code: d.errorCode,
        events: d.events.map((e) => ({ contract_id: toHex(e.contractId), name: e.name, params: e.params.map(typedValueToJson) })),
      },
    };
  },

  'execution.call': (input) => {
    const r = executeCase(input);
    if (r.status === 'failed') return { output: { status: 'failed', code: r.code, instructions: r.instructions }, note: r.message };
    // Writes are a set of final values per (contract, key): listed sorted, so any order an implementation makes them in compares equal.
    const writes = r.writes
      .map((w) => ({ contract_id: toHex(w.contractId), key: toHex(w.key), value: w.value === null ? null : toHex(w.value) }))
      .sort((a, b) => (a.contract_id + a.key < b.contract_id + b.key ? -1 : a.contract_id + a.key > b.contract_id + b.key ? 1 : 0));
    return {
      output: {
        status: 'executed',
        result: r.result === null ? null : typedValueToJson(r.result),
        events: r.events.map((e) => ({ contract_id: toHex(e.contractId), name: e.name, params: e.params.map(typedValueToJson) })),
        writes,
        instructions: r.instructions,
      },
    };
  },

  'evidence.header-match': (input) => {
    const r = inclusionMatchesHeader(inclusion(input.inclusion), bytes(input.root_internal, 'root_internal'), bytes(input.header, 'header'));
    return r === true ? { output: { ok: true } } : refused(r);
  },

  'evidence.coinbase-depth': (input) => {
    const r = coinbaseDepth(bytes(input.coinbase_tx, 'coinbase_tx'), (input.branch as string[]).map((h, i) => bytes(h, `branch[${i}]`)), bytes(input.header, 'header'));
    return r.ok ? { output: { ok: true, depth: r.depth } } : refused(r.reason);
  },
};

/** Operations whose answer drives the node's writer over a RocksDB store: asynchronous. */
const asyncOperations: Record<string, (input: Json) => Promise<Answer>> = {
  'history.run': historyRun,
};

/** The operations this adapter answers (the vector files' names without ".json"). */
export const OPERATIONS: readonly string[] = [...Object.keys(operations), ...Object.keys(asyncOperations)].sort();

/** One case's answer. Throws Error on an unknown operation or a malformed input (a fault of the kit, not a refusal). */
export function answer(op: string, input: unknown): Answer {
  const f = Object.hasOwn(operations, op) ? operations[op] : undefined;
  if (!f) throw new Error(Object.hasOwn(asyncOperations, op) ? `operation ${op} answers asynchronously: answerAsync` : `unknown operation ${JSON.stringify(op)}`);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new Error('input must be a JSON object');
  return f(input as Json);
}

/** One case's answer, for every operation (`history.run` included). */
export async function answerAsync(op: string, input: unknown): Promise<Answer> {
  const f = Object.hasOwn(asyncOperations, op) ? asyncOperations[op] : undefined;
  if (!f) return answer(op, input);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new Error('input must be a JSON object');
  return f(input as Json);
}
