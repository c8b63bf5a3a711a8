/**
 * Peer protocol v2 with an encoder other than protobufjs. Before, a request
 * was signed over protobufjs's re-encoding of what the receiver decoded, default values
 * included, so a standard proto3 encoder (Go, C++, Java, Python omit defaults) failed
 * authentication on a Heartbeat at height 0, GetStateRoots from 0 or any deploy.
 *
 * Every request here is written byte by byte by a tiny proto3 writer (tags, varints,
 * length-delimited fields; default values omitted as the standard encoders do; an
 * unknown field inside each body; fields out of number order), signed with node:crypto
 * exactly as proto/svc.proto's header says, and sent as raw bytes: the node's own Signer,
 * codec and client are not used to build them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, sign as edSign, verify as edVerify, createPublicKey, type KeyObject } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type * as protoLoader from '@grpc/proto-loader';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { buildDeploy } from '@svc-node/client/sdk';
import { client, compileFixture, fund, startDevnet, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { packageDefinition } from '../../src/gossip/server.js';
import { coinEvidenceOf, freePort, startPeerNode } from '../helpers/gossip.js';

// --- a minimal proto3 writer ------------------------------------------------------------

type Field = { no: number; varint: bigint | number } | { no: number; bytes: Uint8Array | string } | { no: number; msg: Field[] };

function varint(v: bigint): Buffer {
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}

/** Fields in the given order; a scalar at its default (0, empty) is omitted, as proto3 encoders do. */
function encode(fields: Field[]): Buffer {
  const parts: Buffer[] = [];
  for (const f of fields) {
    if ('varint' in f) {
      if (BigInt(f.varint) === 0n) continue;
      parts.push(varint(BigInt(f.no << 3)), varint(BigInt(f.varint)));
    } else {
      const b = 'msg' in f ? encode(f.msg) : typeof f.bytes === 'string' ? Buffer.from(f.bytes, 'utf8') : Buffer.from(f.bytes);
      if (!('msg' in f) && b.length === 0) continue;
      parts.push(varint(BigInt((f.no << 3) | 2)), varint(BigInt(b.length)), b);
    }
  }
  return Buffer.concat(parts);
}

/** A field number no message of svc.v2 uses: receivers skip it, and the signature covers it. */
const UNKNOWN: Field = { no: 99, varint: 424242 };

// --- signing as the proto header says -------------------------------------------------------

const keys = generateKeyPairSync('ed25519');
const rawKey = (k: KeyObject): Buffer => Buffer.from(k.export({ format: 'jwk' }).x!, 'base64url');
const SENDER = rawKey(keys.publicKey);

function signedRequest(method: string, receiver: Buffer, body: Buffer, at = BigInt(Date.now())): Buffer {
  const t = Buffer.alloc(8);
  t.writeBigUInt64BE(at);
  const msg = Buffer.concat([Buffer.from('SVC/peer/v2\0', 'utf8'), Buffer.from(`${method}\0`, 'utf8'), receiver, SENDER, t, body]);
  const signature = edSign(null, msg, keys.privateKey);
  // SignedRequest with auth (field 2) written before body (field 1).
  return encode([
    { no: 2, msg: [{ no: 4, bytes: receiver }, { no: 1, bytes: SENDER }, { no: 2, bytes: signature }, { no: 3, varint: at }] },
    { no: 1, bytes: body },
  ]);
}

// --- the node ---------------------------------------------------------------------------------

let devnet: DevnetChainHandle;
let node: NodeProcess;
let raw: grpc.Client;
let nodeKey: Buffer;
const wallet = testWallet(11);

interface Answer {
  code: number;
  details: string;
  resp: Record<string, unknown> | null;
}

function send(method: string, bytes: Buffer): Promise<Answer> {
  const def = (packageDefinition()['svc.v2.Peer'] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>)[method]!;
  return new Promise((resolve) =>
    raw.makeUnaryRequest(`/svc.v2.Peer/${method}`, (b: Buffer) => b, (b: Buffer) => def.responseDeserialize(b) as Record<string, unknown>, bytes, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, (e, r) =>
      resolve(e ? { code: e.code, details: e.details ?? '', resp: null } : { code: grpc.status.OK, details: '', resp: r ?? null }),
    ),
  );
}

async function ok(method: string, body: Buffer): Promise<Record<string, unknown>> {
  const a = await send(method, signedRequest(method, nodeKey, body));
  assert.equal(a.code, grpc.status.OK, `${method}: ${grpc.status[a.code]} ${a.details}`);
  return a.resp!;
}

before(async () => {
  devnet = await startDevnet();
  const port = await freePort();
  node = await startPeerNode(devnet, { name: 'interop-target', port, peers: [] });
  raw = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  // GetIdentity, hand-written too: the proof of possession checked as the header says.
  const challenge = randomBytes(32);
  const id = await send('GetIdentity', encode([{ no: 1, bytes: challenge }]));
  assert.equal(id.code, grpc.status.OK, id.details);
  nodeKey = Buffer.from(id.resp!['public_key'] as Uint8Array);
  const proof = Buffer.concat([Buffer.from('SVC/peer/v2\0GetIdentity\0', 'utf8'), nodeKey, challenge]);
  const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), nodeKey]), format: 'der', type: 'spki' });
  assert.equal(edVerify(null, proof, spki, id.resp!['signature'] as Uint8Array), true, 'the identity proof verifies');
});

after(async () => {
  raw?.close();
  await node?.stop();
  await devnet?.close();
});

test('every RPC accepts requests from a standard proto3 encoder: defaults omitted, fields reordered, an unknown field signed along', async () => {
  // The failing cases first: height 0 and empty url (the body holds only the unknown field).
  const hb = await ok('Heartbeat', encode([UNKNOWN, { no: 2, bytes: '' }, { no: 3, varint: 0 }, { no: 1, bytes: '' }]));
  assert.equal(hb['node_id'], 'interop-target');
  const roots = await ok('GetStateRoots', encode([{ no: 2, varint: 0 }, UNKNOWN, { no: 1, varint: 0 }]));
  assert.ok(Array.isArray(roots['roots']));

  // A deploy: its contract_id is empty by definition, so omitted.
  await fund(devnet, wallet, 2);
  // The coin's evidence names the block fund() mined: until the node holds its header the
  // deploy is refused coin_unproven (paid admission), so the submission waits for the node.
  await waitSynced(node, devnet);
  const svc = client(node, devnet, wallet);
  const dep = buildDeploy(wallet, [(await svc.esplora.utxos(wallet.address))[0]!], compileFixture('counter.svc'), 1);
  await svc.esplora.broadcast(dep.anchor.hex);
  // Its evidence: the anchor and the coin it spends (proto section 9), fields reordered too.
  const coin = await coinEvidenceOf(devnet, dep.anchor.hex, null);
  const evidence: Field[] = [
    ...coin.prevTxs.map((p): Field => ({ no: 4, msg: [...(p.at ? [{ no: 2, msg: [...p.at.branch.map((h): Field => ({ no: 4, bytes: h })), { no: 3, varint: p.at.txIndex }, { no: 2, varint: p.at.height }, { no: 1, bytes: Buffer.from(p.at.blockHash, 'hex') }] }] : []), { no: 1, bytes: p.tx }] })),
    { no: 1, bytes: Buffer.from(dep.anchor.hex, 'hex') },
  ];
  const deployPayload: Field[] = [{ no: 5, msg: evidence }, { no: 4, bytes: JSON.stringify(dep.body) }, { no: 3, bytes: Buffer.alloc(0) }, { no: 2, bytes: Buffer.from(dep.anchor.txid, 'hex') }, { no: 1, varint: 2 }, UNKNOWN];
  const prep = await ok('PreparePayload', encode([UNKNOWN, { no: 1, msg: deployPayload }]));
  assert.deepEqual([prep['valid'], prep['error_code']], [true, '']);
  const sub = await ok('SubmitPayload', encode([{ no: 1, msg: deployPayload }, UNKNOWN]));
  assert.deepEqual(
    (sub['results'] as { accepted: boolean; error_code: string }[]).map((r) => [r.accepted, r.error_code]),
    [[true, '']],
    'the deploy is accepted',
  );

  const cid = Buffer.from(dep.contractId, 'hex');
  const ids = await ok('GetContractIds', encode([UNKNOWN]));
  assert.ok((ids['contract_ids'] as Uint8Array[]).some((b) => Buffer.from(b).equals(cid)));
  const summary = await ok('GetContractSummary', encode([{ no: 3, varint: 0 }, UNKNOWN, { no: 1, bytes: cid }]));
  assert.deepEqual([summary['count'], summary['more']], [1, false]);
  const txids = await ok('GetContractTxids', encode([{ no: 3, varint: 1 }, { no: 2, varint: 0 }, { no: 1, bytes: cid }, UNKNOWN]));
  assert.deepEqual((txids['txids'] as Uint8Array[]).map((b) => Buffer.from(b).toString('hex')), [dep.anchor.txid]);
  const root = await ok('GetContractMerkleRoot', encode([UNKNOWN, { no: 1, bytes: cid }]));
  assert.deepEqual(Buffer.from(root['merkle_root'] as Uint8Array), Buffer.from(summary['merkle_root'] as Uint8Array));
  const got = await ok('GetPayloadByTxid', encode([UNKNOWN, { no: 1, bytes: Buffer.from(dep.anchor.txid, 'hex') }]));
  assert.equal((got['payload'] as { kind: string }).kind, 'PAYLOAD_KIND_DEPLOY');
  // The whole key space (both bounds empty, so omitted), listed.
  const ranges = await ok('GetContractRanges', encode([{ no: 2, msg: [{ no: 3, varint: 128 }, UNKNOWN] }, { no: 1, bytes: cid }, UNKNOWN]));
  const [whole] = ranges['ranges'] as { count: number; listed: boolean; txids: Uint8Array[] }[];
  assert.deepEqual([whole!.count, whole!.listed, whole!.txids.map((b) => Buffer.from(b).toString('hex'))], [1, true, [dep.anchor.txid]]);
});

test('a request signed for another node, replayed here, is refused; so is any changed byte', async () => {
  const body = encode([{ no: 1, bytes: 'replayed' }, { no: 2, bytes: 'http://127.0.0.1:9' }, { no: 3, varint: 5 }]);
  const otherNode = rawKey(generateKeyPairSync('ed25519').publicKey);
  const forOther = await send('Heartbeat', signedRequest('Heartbeat', otherNode, body));
  assert.deepEqual([forOther.code, forOther.details], [grpc.status.UNAUTHENTICATED, 'unauthorized: signed for another receiver']);

  // The receiver field rewritten to this node: the signature covers the receiver key.
  const at = BigInt(Date.now());
  const t = Buffer.alloc(8);
  t.writeBigUInt64BE(at);
  const sigForOther = edSign(null, Buffer.concat([Buffer.from('SVC/peer/v2\0Heartbeat\0', 'utf8'), otherNode, SENDER, t, body]), keys.privateKey);
  const relabeled = encode([{ no: 1, bytes: body }, { no: 2, msg: [{ no: 1, bytes: SENDER }, { no: 2, bytes: sigForOther }, { no: 3, varint: at }, { no: 4, bytes: nodeKey }] }]);
  const r = await send('Heartbeat', relabeled);
  assert.deepEqual([r.code, r.details], [grpc.status.UNAUTHENTICATED, 'unauthorized: signature does not verify']);

  // Each byte of the body changed in turn: never served. The untouched request is.
  const good = signedRequest('Heartbeat', nodeKey, body);
  const bodyAt = good.indexOf(body);
  for (let i = 0; i < body.length; i++) {
    const changed = Buffer.from(good);
    changed[bodyAt + i]! ^= 0x01;
    const a = await send('Heartbeat', changed);
    assert.notEqual(a.code, grpc.status.OK, `body byte ${i} changed and still served`);
    assert.equal(a.code, grpc.status.UNAUTHENTICATED, `body byte ${i}: ${grpc.status[a.code]} ${a.details}`);
  }
  assert.equal((await send('Heartbeat', good)).code, grpc.status.OK);
  // The same body sent as another method: refused.
  assert.equal((await send('GetStateRoots', signedRequest('Heartbeat', nodeKey, body))).code, grpc.status.UNAUTHENTICATED);
});
