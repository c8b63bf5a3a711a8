/**
 * Eclipse of learned peers, against a real node's gossip process: fresh
 * gossip identities try to fill the learned part of its peer set with URLs of their
 * choosing, from one network source and from many (loopback addresses 127.0.0.x, each
 * a source of its own), while an honest peer the node has reached holds a slot.
 *
 * What must hold (src/gossip/peers.ts): one learned URL per key; at most
 * LEARNED_PER_SOURCE unproven learned peers per source; unproven peers within half of
 * the learned slots; a proven peer (one the node reached by an outbound call) never
 * displaced and still heartbeaten by the node; once the flood stops and its URLs have
 * failed the node's heartbeats, an honest newcomer gets a slot and is proven. Every
 * heartbeat of the flood is answered OK (learning is silent), the gossip child never
 * restarts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type * as protoLoader from '@grpc/proto-loader';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { startDevnet } from '../helpers/devnet-node.js';
import { freePort, startPeerNode, urlOf } from '../helpers/gossip.js';
import { Signer } from '../../src/gossip/auth.js';
import { PeerClient } from '../../src/gossip/client.js';
import { LEARNED_PER_SOURCE } from '../../src/gossip/peers.js';
import { bind, loadPeerService, packageDefinition, requestCodec } from '../../src/gossip/server.js';

/** Learned slots (no configured peers): the unproven half is 4. */
const MAX_PEERS = 8;
const UNPROVEN_MAX = MAX_PEERS / 2;
/** Sources of the many-source flood (127.0.0.10 and up) and fresh keys per source. */
const SOURCES = 30;
const KEYS_PER_SOURCE = 5;

let devnet: DevnetChainHandle;
let node: NodeProcess;
let port = 0;
/** The node's gossip key: every request is signed for it. */
let nodeKey: Buffer = Buffer.alloc(0);

before(async () => {
  devnet = await startDevnet();
  port = await freePort();
  node = await startPeerNode(devnet, {
    name: 'eclipse-target',
    port,
    peers: [],
    env: {
      SVC_GOSSIP_MAX_PEERS: String(MAX_PEERS),
      // Long enough that nothing expires during the test: only the rules make room.
      SVC_GOSSIP_PEER_EXPIRY_S: '120',
    },
  });
  const asker = new PeerClient(urlOf(port), new Signer(new Uint8Array(randomBytes(32))), 10_000);
  nodeKey = (await asker.identity()).publicKey;
  asker.close();
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

/** A stand-in honest peer: a gRPC server answering Heartbeat with its key, counting the node's heartbeats. */
async function honestPeer(name: string): Promise<{ url: string; signer: Signer; heard: () => number; until: (n: number) => Promise<void>; close: () => void }> {
  const signer = new Signer(new Uint8Array(randomBytes(32)));
  let heard = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = new grpc.Server();
  server.addService(loadPeerService(), {
    GetIdentity: (call: grpc.ServerUnaryCall<{ challenge: Uint8Array }, object>, cb: grpc.sendUnaryData<object>) =>
      cb(null, { public_key: signer.publicKey, node_id: name, signature: signer.proveIdentity(call.request.challenge) }),
    Heartbeat: (_call: unknown, cb: grpc.sendUnaryData<object>) => {
      heard++;
      for (const w of waiters.filter((x) => heard >= x.n)) w.resolve();
      cb(null, { node_id: name, height: '0', public_key: signer.publicKey, peers: 0 });
    },
  });
  const p = await bind(server, '127.0.0.1', await freePort());
  return {
    url: urlOf(p),
    signer,
    heard: () => heard,
    until: (n) => (heard >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: () => server.forceShutdown(),
  };
}

const heartbeatDef = (): protoLoader.MethodDefinition<object, object> =>
  (packageDefinition()['svc.v2.Peer'] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>)['Heartbeat']!;

/** Raw HTTP/2 connections from a chosen loopback address: grpc-js cannot pick its source. */
class SourceClient {
  private readonly session: http2.ClientHttp2Session;
  constructor(readonly local: string) {
    this.session = http2.connect(`http://127.0.0.1:${port}`, { createConnection: () => net.connect({ host: '127.0.0.1', port, localAddress: local }) });
    this.session.on('error', () => undefined);
  }

  /** A signed Heartbeat claiming `url`; answers the gRPC status and the node's active peer count. */
  heartbeat(s: Signer, url: string): Promise<{ status: number; peers: number | null }> {
    const msg = requestCodec('Heartbeat').serialize(s.request('Heartbeat', nodeKey, { node_id: 'flood', url, height: '0' }));
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt32BE(msg.length, 1);
    msg.copy(frame, 5);
    return new Promise((resolve, reject) => {
      const req = this.session.request({ ':method': 'POST', ':path': '/svc.v2.Peer/Heartbeat', 'content-type': 'application/grpc', te: 'trailers' });
      const chunks: Buffer[] = [];
      let status: number | null = null;
      req.on('response', (h) => {
        if (h['grpc-status'] !== undefined) status = Number(h['grpc-status']);
      });
      req.on('trailers', (t) => {
        if (t['grpc-status'] !== undefined) status = Number(t['grpc-status']);
      });
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('error', reject);
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const r = body.length >= 5 ? (heartbeatDef().responseDeserialize(body.subarray(5)) as { peers?: number }) : null;
        resolve({ status: status ?? -1, peers: r?.peers ?? null });
      });
      req.end(frame);
    });
  }

  close(): void {
    this.session.close();
  }
}

test('fresh identities cannot fill the learned peer set: one URL per key, two per source, half the slots for unproven; the proven peer stays', async () => {
  const gossipStarts = (): number => node.lines.filter((l) => l.msg === 'child started' && l['role'] === 'gossip').length;
  const probe = new SourceClient('127.0.0.2');
  const probeKey = new Signer(new Uint8Array(randomBytes(32)));
  const activePeers = async (): Promise<number> => (await probe.heartbeat(probeKey, '')).peers ?? -1;
  const honest = await honestPeer('honest');
  const honestClient = new PeerClient(urlOf(port), honest.signer, 10_000);
  const sessions: SourceClient[] = [];
  const codes: Record<string, number> = {};
  const count = (st: number): void => {
    const k = grpc.status[st] ?? String(st);
    codes[k] = (codes[k] ?? 0) + 1;
  };
  try {
    // 1. The honest peer introduces itself; the node's heartbeats reach it (two, so the
    //    first answer has been taken: the peer is proven).
    await honestClient.call('Heartbeat', { node_id: 'honest', url: honest.url, height: '0' });
    await honest.until(2);
    assert.equal(await activePeers(), 1);

    // 2. One key claiming 40 URLs: one entry.
    const mover = new Signer(new Uint8Array(randomBytes(32)));
    const one = new SourceClient('127.0.0.3');
    sessions.push(one);
    for (let i = 0; i < 40; i++) count((await one.heartbeat(mover, `http://127.0.0.3:${1000 + i}`)).status);
    assert.equal(await activePeers(), 2, 'the mover holds one entry');

    // 3. Fresh keys from one source, each on a connection of its own (the source is the
    //    address, not the connection): LEARNED_PER_SOURCE entries (the mover's is another).
    await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const c = new SourceClient('127.0.0.4');
        sessions.push(c);
        count((await c.heartbeat(new Signer(new Uint8Array(randomBytes(32))), `http://127.0.0.4:${2000 + i}`)).status);
      }),
    );
    assert.equal(await activePeers(), 2 + LEARNED_PER_SOURCE);

    // 4. Fresh keys from many sources, while the node heartbeats (and fails) their URLs:
    //    the unproven half churns, never grows, and the proven peer keeps its slot.
    const heardBefore = honest.heard();
    const flood = Array.from({ length: SOURCES }, (_, i) => new SourceClient(`127.0.0.${10 + i}`));
    sessions.push(...flood);
    let maxActive = 0;
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: SOURCES }, async (_, s) => {
          const c = flood[s]!;
          for (let k = 0; k < KEYS_PER_SOURCE; k++) {
            const r = await c.heartbeat(new Signer(new Uint8Array(randomBytes(32))), `http://127.0.0.${10 + s}:${3000 + round * 100 + k}`);
            count(r.status);
            if (r.peers !== null) maxActive = Math.max(maxActive, r.peers);
          }
        }),
      );
      // The node keeps heartbeating the proven peer through the flood.
      await honest.until(honest.heard() + 1);
    }
    assert.ok(honest.heard() > heardBefore);
    assert.ok(maxActive <= 1 + UNPROVEN_MAX, `active peers during the flood: at most the proven one and ${UNPROVEN_MAX} unproven (saw ${maxActive})`);
    assert.ok((await activePeers()) <= 1 + UNPROVEN_MAX);

    // 5. The flood stops; its URLs fail the node's heartbeats; an honest newcomer from a
    //    fresh source introduces itself each heartbeat interval (as a node does) until
    //    the node reaches it.
    const newcomer = await honestPeer('newcomer');
    const nc = new SourceClient('127.0.0.200');
    sessions.push(nc);
    const deadline = Date.now() + 10_000;
    let tries = 0;
    const reached = newcomer.until(2);
    let done = false;
    void reached.then(() => (done = true));
    while (!done && Date.now() < deadline) {
      tries++;
      count((await nc.heartbeat(newcomer.signer, newcomer.url)).status);
      // Paced like a peer's own heartbeats (the node's interval is 0.3 s here).
      await Promise.race([reached, new Promise((r) => setTimeout(r, 300))]);
    }
    assert.ok(done, 'the newcomer was reached by the node');
    newcomer.close();
    console.log(`# hardening/peer-eclipse: ${JSON.stringify(codes)} heartbeats; active peers during the flood at most ${maxActive} of ${MAX_PEERS}; the newcomer got in after ${tries} heartbeat(s)`);
    assert.deepEqual(Object.keys(codes), ['OK'], 'every heartbeat answered OK: learning is silent');
    assert.equal(gossipStarts(), 1, 'the gossip child never restarted');
  } finally {
    honestClient.close();
    honest.close();
    probe.close();
    for (const s of sessions) s.close();
  }
});
