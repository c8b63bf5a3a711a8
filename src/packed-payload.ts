/**
 * A payload as one byte array, the form it takes between the gossip process, the core
 * and the writer (src/messages.ts, `PackedPayload`). As an object a payload is ~20
 * values (its evidence's branches are 32-byte arrays each), and every hop copied and
 * rebuilt each of them (v8 serialization between processes, structured clone between
 * threads): at a catch-up's rate that was most of what the gossip process and the
 * serving peer's core thread did. Packed, a hop moves one array.
 *
 * Unpacked, the payload's byte fields are views into the one array, so a payload handed
 * on to another thread (the pool, the writer) carries its own bytes and nothing more:
 * structured clone copies a view's whole backing buffer, and arrays read out of one
 * message all share that message's buffer. `unpackOwn` makes the copy that guarantees it.
 *
 * Layout (big-endian): kind u8 (0 call, 1 deploy) | txid 32 (display order) |
 * contract id 32 (calls only) | body length u32 | body | evidence (the rest, possibly
 * empty: packages/protocol/src/evidence.ts, encodeEvidence).
 */
import { NodeError } from '@svc-node/protocol/errors';
import type { PackedPayload, PackedPeerPayload, PeerPayload, WirePayload } from './messages.js';
import { decodeEvidence, encodeEvidence } from '@svc-node/protocol/evidence';
import { HEX32 } from '@svc-node/protocol/identifiers';

const KIND_CALL = 0;
const KIND_DEPLOY = 1;
const ID_BYTES = 32;

const malformed = (what: string): NodeError => new NodeError('bad_request', `packed payload ${what}`);

/** `p` as one array of its own. Throws bad_request for what cannot be packed (an id not 32 bytes of hex). */
export function packPayload(p: WirePayload): PackedPayload {
  const call = p.kind === 'call';
  if (!call && p.kind !== 'deploy') throw malformed('kind must be call or deploy');
  const evidence = p.evidence ? encodeEvidence(p.evidence) : null;
  const len = 1 + ID_BYTES + (call ? ID_BYTES : 0) + 4 + p.body.length + (evidence?.length ?? 0);
  // Its own buffer (not a slice of Node's pool): a clone of it copies these bytes only.
  const out = Buffer.from(new ArrayBuffer(len));
  let o = out.writeUInt8(call ? KIND_CALL : KIND_DEPLOY, 0);
  o += writeId(out, o, p.txid, 'txid');
  if (call) o += writeId(out, o, p.contract_id, 'contract_id');
  o = out.writeUInt32BE(p.body.length, o);
  out.set(p.body, o);
  o += p.body.length;
  if (evidence) out.set(evidence, o);
  return new Uint8Array(out.buffer);
}

function writeId(out: Buffer, at: number, hex: string, field: string): number {
  if (typeof hex !== 'string' || !HEX32.test(hex)) throw malformed(`${field} is not 64 lowercase hex`);
  out.write(hex, at, ID_BYTES, 'hex');
  return ID_BYTES;
}

/** The payload `b` packs, its byte fields views into `b`. Throws bad_request for bytes that are not a packed payload. */
export function unpackPayload(b: Uint8Array): WirePayload {
  if (!(b instanceof Uint8Array)) throw malformed('is not bytes');
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const need = (at: number, n: number, what: string): void => {
    if (buf.length - at < n) throw malformed(`ends inside its ${what}`);
  };
  need(0, 1 + ID_BYTES, 'txid');
  const kind = buf[0];
  if (kind !== KIND_CALL && kind !== KIND_DEPLOY) throw malformed(`has unknown kind ${kind}`);
  let o = 1;
  const txid = buf.toString('hex', o, o + ID_BYTES);
  o += ID_BYTES;
  let contractId = '';
  if (kind === KIND_CALL) {
    need(o, ID_BYTES, 'contract id');
    contractId = buf.toString('hex', o, o + ID_BYTES);
    o += ID_BYTES;
  }
  need(o, 4, 'body length');
  const bodyLength = buf.readUInt32BE(o);
  o += 4;
  // Its size against MAX_PAYLOAD_BYTES is intake's to refuse (payload_too_large), as for REST.
  need(o, bodyLength, 'body');
  const body = new Uint8Array(b.buffer, b.byteOffset + o, bodyLength);
  o += bodyLength;
  const evidence = o < buf.length ? decodeEvidence(b.subarray(o), { views: true }) : null;
  return { kind: kind === KIND_CALL ? 'call' : 'deploy', txid, contract_id: contractId, body, evidence };
}

/** `unpackPayload` of a copy of `b`: the payload's arrays share one buffer holding it alone. */
export function unpackOwn(b: Uint8Array): WirePayload {
  if (!(b instanceof Uint8Array)) throw malformed('is not bytes');
  return unpackPayload(b.slice());
}

/** A writer's PeerPayload packed for the core and the gossip process. */
export function packPeerPayload(p: PeerPayload | null): PackedPeerPayload | null {
  return p && { payload: packPayload(p.payload), height: p.height, tx_index: p.tx_index };
}
