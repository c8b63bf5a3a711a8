/**
 * The floor of a synced payload: the work any design of the node does for each payload a
 * fresh node takes from a peer, measured on this machine in the bench's own process with
 * the node's own functions, so that the catch-up's CPU per payload can be read against it
 * (how much of it is the pipeline rather than the work) and half the ceiling can be
 * judged by what is left once the floor is paid.
 *
 * Counted, per payload: opening the envelope (strict decode, two tagged hashes, the
 * BIP-340 verify: the pool's task), checking its evidence and binding (the anchor parsed,
 * its txid, the branch folded, the stamp and outpoint: intake's checks), both ends of the
 * peer wire (a GetPayloads answer of GET_PAYLOADS_MAX encoded as the serving peer's gRPC
 * does and decoded as the asker's does, each payload converted from and to the node's
 * types), and keeping it (its body and evidence written to a RocksDB with the node's
 * options, in batches, with the flushes and compactions they cause). Not counted, so
 * this is a lower bound: executing the call and storing what it decides, reading it on
 * the serving peer, every hand-over between processes and threads, the garbage they make.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as protoLoader from '@grpc/proto-loader';
import { decodeEnvelope, openEnvelope } from '@svc-node/protocol/envelope';
import { checkEvidence, type Evidence } from '@svc-node/protocol/evidence';
import { checkCallBinding } from '@svc-node/protocol/binding';
import { internalBytes } from '@svc-node/protocol/bitcoin';
import { merkleBranches } from '@svc-node/protocol/merkle-branch';
import { packageDefinition } from '../../src/gossip/server.js';
import { fromProtoPayload, toProtoPayload } from '../../src/gossip/wire.js';
import { GET_PAYLOADS_MAX } from '../../src/gossip/limits.js';
import { rocksAt } from '../../src/writer/db.js';
import { evidence as evidenceStore, callBodies } from '../../src/writer/store/index.js';
import type { DevnetChain } from '../../src/devnet/chain-server.js';
import type { WirePayload } from '../../src/messages.js';
import type { CallBody } from './bank-calls.js';

/** A call as a peer sends it in a sync: its body, its evidence placing it in its block. */
export interface SyncedCall {
  payload: WirePayload;
  /** The outpoint its envelope names (what intake hands checkEvidence). */
  outpoint: { txid: string; vout: number };
}

/**
 * The calls `bodies` (mined) as a peer serves them: each with its anchor's bytes and the
 * branch placing it in its block (one tree computation per block).
 */
export function syncedCalls(chain: DevnetChain, bodies: readonly CallBody[]): SyncedCall[] {
  const byBlock = new Map<number, { body: CallBody; index: number }[]>();
  for (const body of bodies) {
    const at = chain.txPosition(body.txid);
    if (!at) throw new Error(`call ${body.txid} is not mined`);
    const list = byBlock.get(at.height) ?? [];
    list.push({ body, index: at.index });
    byBlock.set(at.height, list);
  }
  const out: SyncedCall[] = [];
  for (const [height, list] of byBlock) {
    const block = chain.blockAt(height)!;
    const branches = merkleBranches(block.txids.map(internalBytes), list.map((c) => c.index));
    list.forEach(({ body, index }, k) => {
      const tx = chain.getTx(body.txid)!;
      const bytes = Buffer.from(body.payload, 'base64');
      const envelope = decodeEnvelope(bytes);
      const evidence: Evidence = { anchorTx: tx.toBuffer(), confirmed: { blockHash: block.hash, height, txIndex: index, branch: branches[k]! }, spentBy: null };
      out.push({
        payload: { kind: 'call', txid: body.txid, contract_id: body.contract_id, body: new Uint8Array(bytes), evidence },
        outpoint: { txid: Buffer.from(envelope.outpointTxid).toString('hex'), vout: envelope.outpointVout },
      });
    });
  }
  return out;
}

/** CPU seconds of this process (every thread) spent in `f`. */
async function cpuOf(f: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  await f();
  const d = process.cpuUsage(before);
  return (d.user + d.system) / 1e6;
}

/** Calls each step runs over before it is measured: V8 has compiled it by then, as it has a few seconds into a sync. */
const WARM_UP = 2_048;
/** Measured passes of each step (the store's is one: it grows the database as a sync does). */
const PASSES = 3;

/** Records per RocksDB batch: about a GetPayloads answer's worth, as a sync writes them. */
const STORE_BATCH = GET_PAYLOADS_MAX;

export interface FloorParts {
  open: number;
  evidence: number;
  wire: number;
  store: number;
  total: number;
}

/**
 * The floor in µs per payload, each part over every call of `calls` (the store part over
 * `storeCount` records, the calls' bytes in turn, so the database grows as the catch-up's
 * does). The machine should be otherwise idle.
 */
export async function payloadFloor(calls: readonly SyncedCall[], storeCount: number): Promise<FloorParts> {
  const n = calls.length;
  const perPayload = (s: number, count = n): number => (s * 1e6) / count;
  /**
   * CPU µs per payload of `step` over every call: the least of PASSES passes, after one
   * over the first WARM_UP (compiled code, as a few seconds into a sync); a floor, so the
   * pass a collection or the machine's noise slowed least.
   */
  const measure = async (step: (from: number, to: number) => void): Promise<number> => {
    step(0, Math.min(n, WARM_UP));
    let least = Infinity;
    for (let k = 0; k < PASSES; k++) least = Math.min(least, perPayload(await cpuOf(() => step(0, n))));
    return least;
  };

  const opened = new Array<ReturnType<typeof openEnvelope>>(n);
  const open = await measure((from, to) => {
    for (let i = from; i < to; i++) opened[i] = openEnvelope(calls[i]!.payload.body);
  });

  const evidence = await measure((from, to) => {
    for (let i = from; i < to; i++) {
      const c = calls[i]!;
      const checked = checkEvidence(c.payload.txid, c.outpoint, c.payload.evidence!);
      if (!checked.ok) throw new Error(`bench evidence does not hold: ${checked.reason}`);
      const o = opened[i]!;
      if (!checkCallBinding(checked.anchor, o.envelope, o.envelopeHash).ok) throw new Error('bench call does not bind');
    }
  });

  const svc = packageDefinition()['svc.v2.Peer'] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>;
  const serialize = svc['GetPayloads']!.responseSerialize as (v: object) => Buffer;
  const deserialize = svc['GetPayloads']!.responseDeserialize as (b: Buffer) => { payloads: { payload: unknown }[] };
  const wire = await measure((from, to) => {
    for (let i = from; i < to; i += GET_PAYLOADS_MAX) {
      const page = calls.slice(i, Math.min(to, i + GET_PAYLOADS_MAX));
      const bytes = serialize({ payloads: page.map((c) => ({ payload: toProtoPayload(c.payload), position: { height: c.payload.evidence!.confirmed!.height, tx_index: c.payload.evidence!.confirmed!.txIndex } })), answered: page.length });
      for (const f of deserialize(bytes).payloads) fromProtoPayload(f.payload);
    }
  });

  const dir = mkdtempSync(join(tmpdir(), 'svc-floor-'));
  const db = rocksAt(join(dir, 'db'));
  let dbOpen = false;
  let store: number;
  try {
    await db.open();
    dbOpen = true;
    const bodies = calls.map((c) => callBodies.encode(Buffer.from(c.payload.body)));
    const evidences = calls.map((c) => evidenceStore.encode(c.payload.evidence!));
    store = perPayload(
      await cpuOf(async () => {
        for (let i = 0; i < storeCount; ) {
          const batch = db.batch();
          for (const end = Math.min(storeCount, i + STORE_BATCH); i < end; i++) {
            // A distinct txid per record: the call's, its last 4 bytes the record's number.
            const txid = Buffer.from(calls[i % n]!.payload.txid, 'hex');
            txid.writeUInt32BE(i, 28);
            batch.put(callBodies.key(txid), bodies[i % n]!).put(evidenceStore.key(txid), evidences[i % n]!);
          }
          // Not synced: the node syncs once per update of many blocks, not per batch.
          await batch.write({ sync: false });
        }
        // Closing flushes the memtables: the writes' whole cost, not the part before a flush.
        dbOpen = false;
        await db.close();
      }),
      storeCount,
    );
  } finally {
    if (dbOpen) await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { open, evidence, wire, store, total: open + evidence + wire + store };
}
