/**
 * The runner's own gossip peer (proto/svc.proto's header, copied to ./svc.proto, and
 * docs/GOSSIP.md): Ed25519 identities and signed requests per section 2, a client that
 * calls a node's peer service, and a server that plays a peer a node dials. Written from
 * the proto's text with @grpc/grpc-js, @grpc/proto-loader and protobufjs (for the inner
 * request bodies the signature covers), not imported from the node under test.
 */
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

const PROTO = fileURLToPath(new URL('./svc.proto', import.meta.url));
// Field names as in the proto, uint64 as decimal strings (section 6), enums by name.
const LOADER = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
const service = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, LOADER)).svc.v2.Peer;
const root = new protobuf.Root().loadSync(PROTO, { keepCase: true });

/** The inner request message of each signed method (the proto's comments at each RPC). */
const BODY_TYPE = {
  Heartbeat: 'HeartbeatRequest',
  SubmitPayload: 'SubmitPayloadRequest',
  PreparePayload: 'PreparePayloadRequest',
  GetContractIds: 'GetContractIdsRequest',
  GetContractSummary: 'GetContractSummaryRequest',
  GetContractTxids: 'GetContractTxidsRequest',
  GetContractMerkleRoot: 'GetContractMerkleRootRequest',
  GetPayloadByTxid: 'GetPayloadByTxidRequest',
  GetStateRoots: 'GetStateRootsRequest',
  GetContractRanges: 'GetContractRangesRequest',
  GetPayloads: 'GetPayloadsRequest',
  GetHeaders: 'GetHeadersRequest',
};

export function encodeBody(method, obj) {
  const t = root.lookupType(`svc.v2.${BODY_TYPE[method]}`);
  return Buffer.from(t.encode(t.fromObject(obj)).finish());
}
export function decodeBody(method, bytes) {
  const t = root.lookupType(`svc.v2.${BODY_TYPE[method]}`);
  return t.toObject(t.decode(bytes), LOADER);
}

// Section 2: the domain and protocol version, and the SPKI prefix of a raw Ed25519 key.
const DOMAIN = Buffer.from('SVC/peer/v2\0', 'utf8');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

/** The bytes a request's signature covers (section 2). */
export function signedBytes(method, receiverKey, senderKey, sentAtMs, body) {
  const t = Buffer.alloc(8);
  t.writeBigUInt64BE(BigInt(sentAtMs));
  return Buffer.concat([DOMAIN, Buffer.from(method, 'ascii'), Buffer.of(0), receiverKey, senderKey, t, body]);
}

/** What a GetIdentity answer signs (section 2, "Bootstrap"). */
export const identityProofBytes = (publicKey, challenge) => Buffer.concat([DOMAIN, Buffer.from('GetIdentity\0', 'ascii'), publicKey, challenge]);

export function ed25519Verify(rawKey, message, signature) {
  try {
    return verify(null, message, createPublicKey({ key: Buffer.concat([SPKI_ED25519, rawKey]), format: 'der', type: 'spki' }), signature);
  } catch {
    return false;
  }
}

/** A fresh peer identity (Ed25519). */
export class PeerKey {
  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    this.privateKey = privateKey;
    this.raw = Buffer.from(publicKey.export({ format: 'jwk' }).x, 'base64url');
  }
  sign(message) {
    return sign(null, message, this.privateKey);
  }
  /**
   * A SignedRequest for `method` to the node holding `receiverKey`. `opts` forges it:
   * `body` (bytes sent instead of the encoded `obj`), `sentAtMs`, `signedFor` (the
   * receiver key signed over, and named in auth).
   */
  request(method, receiverKey, obj, opts = {}) {
    const body = opts.body ?? encodeBody(method, obj);
    const sentAt = opts.sentAtMs ?? Date.now();
    const receiver = opts.signedFor ?? receiverKey;
    const signature = this.sign(signedBytes(method, receiver, this.raw, sentAt, body));
    return { body, auth: { public_key: this.raw, signature, sent_at_ms: String(sentAt), receiver_public_key: receiver } };
  }
}

const STATUS_NAME = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));

/** A client of one node's peer service. */
export class PeerClient {
  constructor(url) {
    this.client = new service(url.replace(/^[a-z]+:\/\//, ''), grpc.credentials.createInsecure());
  }
  /** Resolves `{ok: true, res}` or `{ok: false, status: 'UNAUTHENTICATED', details}`; never rejects. */
  call(method, req, deadlineMs = 20_000) {
    return new Promise((resolve) => {
      this.client[method](req, { deadline: Date.now() + deadlineMs }, (err, res) => {
        resolve(err ? { ok: false, status: STATUS_NAME[err.code] ?? String(err.code), details: err.details ?? '' } : { ok: true, res });
      });
    });
  }
  /** The node's key, with its proof of possession checked; throws when the proof fails. */
  async identity() {
    const challenge = randomBytes(32);
    const r = await this.call('GetIdentity', { challenge });
    if (!r.ok) throw new Error(`GetIdentity: ${r.status} ${r.details}`);
    return { key: Buffer.from(r.res.public_key), proofValid: ed25519Verify(Buffer.from(r.res.public_key), identityProofBytes(Buffer.from(r.res.public_key), challenge), Buffer.from(r.res.signature)) };
  }
  close() {
    this.client.close();
  }
}

/**
 * A peer a node dials: answers GetIdentity with its proof, Heartbeat, and the signed
 * methods in `handlers` (method -> async (decodedBody) => response); other methods answer
 * UNIMPLEMENTED. `asked` records every signed call as {method, body}.
 */
export async function startPeerServer(handlers) {
  const key = new PeerKey();
  const asked = [];
  const impl = {};
  for (const name of Object.keys(service.service)) {
    impl[name] = (call, cb) => {
      if (name === 'GetIdentity') return cb(null, { public_key: key.raw, node_id: 'conformance-peer', signature: key.sign(identityProofBytes(key.raw, Buffer.from(call.request.challenge))) });
      let body;
      try {
        body = decodeBody(name, call.request.body);
      } catch (e) {
        return cb({ code: grpc.status.INVALID_ARGUMENT, details: `bad_request: ${e.message}` });
      }
      asked.push({ method: name, body });
      const h = handlers[name] ?? (name === 'Heartbeat' ? async () => ({ node_id: 'conformance-peer', height: '0', public_key: key.raw, peers: 0, tip_height: '0', tip_header: Buffer.alloc(0) }) : null);
      if (!h) return cb({ code: grpc.status.UNIMPLEMENTED, details: `the conformance peer does not answer ${name}` });
      h(body).then((res) => cb(null, res), (e) => cb({ code: grpc.status.UNAVAILABLE, details: `overloaded: ${e.message}` }));
    };
  }
  const server = new grpc.Server();
  server.addService(service.service, impl);
  const port = await new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { url: `http://127.0.0.1:${port}`, key, asked, close: () => new Promise((r) => server.tryShutdown(() => r())) };
}

// ---------- Bitcoin block headers (80 bytes) ----------

const sha256d = (b) => createHash('sha256').update(createHash('sha256').update(b).digest()).digest();

/** Display hex of a header's hash. */
export const headerHash = (h) => Buffer.from(sha256d(h)).reverse().toString('hex');

/**
 * A regtest header (bits 0x207fffff, target 0x7fffff << 232) on `prevHashHex` at time
 * `time`, its nonce chosen so that its hash meets the target (`work`) or misses it.
 */
export function regtestHeader(prevHashHex, time, work) {
  const h = Buffer.alloc(80);
  h.writeInt32LE(0x20000000, 0);
  Buffer.from(prevHashHex, 'hex').reverse().copy(h, 4);
  randomBytes(32).copy(h, 36); // a merkle root no block has
  h.writeUInt32LE(time, 68);
  h.writeUInt32LE(0x207fffff, 72);
  for (let nonce = 0; ; nonce++) {
    h.writeUInt32LE(nonce, 76);
    // The hash read as a big-endian number (its last byte first) meets the target
    // 7fffff00...00 when its top byte is below 0x7f, and misses it when that byte is 0x80
    // or more; a top byte of 0x7f may go either way, so neither kind takes it.
    const top = sha256d(h)[31];
    if (work ? top < 0x7f : top >= 0x80) return h;
  }
}
