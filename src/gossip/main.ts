/**
 * Gossip process entry: the gRPC peer service on bind_address, signed heartbeats to the
 * peer set, forwarding of accepted payloads, and Merkle-diff sync at startup and every
 * peer_sync_interval_s. It holds no node state of its own beyond the peer set, the seen
 * set and the rate limiters; every payload is verified by the core's intake.
 */
import * as grpc from '@grpc/grpc-js';
import PQueue from 'p-queue';
import { awaitInit, exitOnBindError, onShutdown, serveProcessMetrics, toSupervisor } from '../supervisor/child.js';
import { connectRpc, type RpcClient } from '../ipc/rpc.js';
import { bind, loadPeerService, serverOptions } from './server.js';
import { Signer, Verifier } from './auth.js';
import { PeerSet, type Peer } from './peers.js';
import { Forwarder } from './forwarder.js';
import { PeerService, advertFields, type LocalAdvert } from './service.js';
import { SyncEngine } from './sync/engine.js';
import { counterFamilies } from './counters.js';
import { hex } from './wire.js';
import { logger } from '../log.js';
import { PAYLOAD_ACCEPTED_EVENT, zeroCounters, type CoreEvents, type WirePayload } from '../messages/gossip.js';
import type { CoreApi } from '../messages/core.js';

const log = logger('gossip');
const init = await awaitInit('gossip');
const cfg = init.config;
const opts = cfg.gossip;
let core: RpcClient<CoreApi, CoreEvents> = await connectRpc<CoreApi, CoreEvents>(init.ipcPath);

const signer = new Signer(init.identity.seed);
const selfKey = init.identity.publicKeyHex;
const counters = zeroCounters();
const peers = new PeerSet(
  { configured: cfg.peers, selfUrl: cfg.publicUrl, selfKey, maxPeers: opts.maxPeers, expiryMs: opts.peerExpiryS * 1000, timeoutMs: opts.requestTimeoutS * 1000 },
  signer,
);
const sendQueue = new PQueue({ concurrency: opts.sendConcurrency });
const forwarder = new Forwarder(peers, sendQueue, { peerLimit: cfg.peerLimit, batchMax: opts.batchMax, batchDelayMs: opts.batchDelayMs }, counters, log);
/**
 * How long a heartbeat (sent or answered) waits for the core's advert before it carries
 * the last one: the core answers from memory in well under a millisecond, and a peer's
 * heartbeat must be answered within its request deadline (gossip.request_timeout_s, 10 s
 * by default).
 */
const ADVERT_DEADLINE_MS = 1_000;
/** The last advert the core gave; what heartbeats carry while it does not answer. */
let localAdvert: LocalAdvert = { height: 0, tip: null };
/**
 * The processed height and header tip now, for a heartbeat being sent or answered: one
 * small request the core answers from memory (src/core/state-version.ts), so what a peer
 * sees is never older than that heartbeat. (Read once per round instead, from
 * node_status, the height lagged a whole interval and the writer's queue: ~20 s after a
 * catch-up.)
 */
async function currentAdvert(): Promise<LocalAdvert> {
  try {
    const a = await core.call('peerAdvert', {}, ADVERT_DEADLINE_MS);
    localAdvert = { height: a.height ?? 0, tip: a.tip };
  } catch {
    /* the core is restarting or busy; keep the last advert */
  }
  return localAdvert;
}

/**
 * A peer's heartbeat (its request or its answer) announced its header tip: one above this
 * node's goes to the core, which decides whether it is worth an endpoint request
 * (ChainFollower.notePeerTip). Malformed announcements were refused by the wire checks.
 */
function notePeerTip(t: { tip_height: string; tip_header: Uint8Array }, announcer: string): void {
  const height = Number(t.tip_height);
  if (t.tip_header.length !== 80 || height <= (localAdvert.tip?.height ?? localAdvert.height)) return;
  counters.tip_announcements_passed++;
  void core.call('peerTip', { height, header: t.tip_header, announcer }).catch(() => undefined);
}
let dirty = true;
const service = new PeerService({
  core: () => core,
  verifier: new Verifier(signer.publicKey),
  signer,
  peers,
  forwarder,
  counters,
  opts,
  nodeId: cfg.nodeId,
  publicKey: signer.publicKey,
  localAdvert: currentAdvert,
  peerTip: notePeerTip,
  log,
});
const sync = new SyncEngine({
  core: () => core,
  peers,
  counters,
  concurrency: opts.syncConcurrency,
  log: log.child('sync'),
  stored: (p) => service.markAccepted(p),
  changed: () => (dirty = true),
  synced: () => void initialSync(),
  localHeight: () => localAdvert.height,
});

/** REST intake stored a payload: gossip it (it is new, so it goes to peer_limit peers). */
function onAccepted(p: WirePayload): void {
  // Checked all the same: it crossed a socket.
  if (!p || typeof p.txid !== 'string' || !(p.body instanceof Uint8Array)) return;
  service.markAccepted(p);
  const n = forwarder.forward(p, null);
  log.debug('gossiping a payload accepted by REST intake', { txid: p.txid, kind: p.kind, peers: n });
}

/**
 * The first sync since this process started has ended: a peer's sync completed, or the
 * whole startup round did (every peer failed). Told to the core (and again to a restarted
 * one), so a light node applies blocks with what the peers brought instead of waiting.
 */
let initialSyncDone = false;
/** Until the startup sync ends, a peer whose first heartbeat is answered is synced with at once. */
let startupSyncing = true;
const startupQueued = new Set<Peer>();

function initialSync(): Promise<void> {
  if (initialSyncDone) return Promise.resolve();
  initialSyncDone = true;
  return reportInitialSync();
}

async function reportInitialSync(): Promise<void> {
  try {
    await core.call('peerInitialSyncDone', {});
  } catch (e) {
    // The core is restarting: watchCore tells the new one.
    log.debug('could not tell the core the first sync ended', { error: (e as Error).message });
  }
}

/** Reconnects after a core restart, like the REST front. */
function watchCore(c: RpcClient<CoreApi, CoreEvents>): void {
  c.on(PAYLOAD_ACCEPTED_EVENT, onAccepted);
  c.onClose(() => {
    void connectRpc<CoreApi, CoreEvents>(init.ipcPath, 60_000).then(
      (next) => {
        core = next;
        watchCore(next);
        dirty = true;
        if (initialSyncDone) void reportInitialSync();
        log.info('reconnected to core');
      },
      () => {
        log.error('core unreachable for 60 s; exiting so the supervisor restarts this process');
        process.exit(1);
      },
    );
  });
}
watchCore(core);

serveProcessMetrics('gossip', () => counterFamilies(counters, peers.active().length));

const server = new grpc.Server(serverOptions());
server.addService(loadPeerService(), service.handlers());
const { host, port } = cfg.bindAddress;
const bound = await exitOnBindError('gossip', bind(server, host, port));
log.info('listening', { role: 'gossip', address: `${host}:${bound}`, identity: init.identity.stable ? 'stable' : 'ephemeral', public_key: selfKey, peers: peers.all().length });
toSupervisor({ type: 'listening', role: 'gossip', address: host, port: bound });

// ---- heartbeats, expiry, reports to the core

/** Settles when the first heartbeat is answered (startup syncs then, with that peer first). */
let firstAnswer!: () => void;
const firstHeartbeatAnswered = new Promise<void>((r) => (firstAnswer = r));

async function heartbeat(p: Peer, advert: LocalAdvert): Promise<void> {
  try {
    const r = await p.client.call('Heartbeat', { node_id: cfg.nodeId, url: cfg.publicUrl, ...advertFields(advert) });
    // Its answer came from the URL this node called: that names the announcer.
    notePeerTip(r, p.url);
    const wasActive = peers.isActive(p);
    peers.ok(p, r.public_key.length === 32 ? hex(r.public_key) : undefined, r.node_id);
    p.height = Number(r.height); // a checked u64 (protocols.ts)
    if (!wasActive) {
      dirty = true;
      log.info('peer active', { peer: p.url, node_id: r.node_id });
    }
    // During the startup sync, each peer is synced with once, as its first heartbeat is
    // answered (it may be active already: its own heartbeats reached this node first).
    // Later arrivals wait for the next round, as a peer coming back does.
    if (startupSyncing && !startupQueued.has(p)) {
      startupQueued.add(p);
      sync.peerActive(p);
    }
    firstAnswer();
  } catch {
    peers.failed(p);
  }
}

let lastActive = -1;
/** Peers whose heartbeat is still in flight: never two at once to one peer. */
const heartbeating = new Set<Peer>();

function noteActive(): void {
  const active = peers.active().length;
  if (active !== lastActive) {
    lastActive = active;
    dirty = true;
  }
}

/**
 * One heartbeat round; resolves when the heartbeats it started are answered. Each peer is
 * independent: a peer that hangs until the request deadline keeps only its own heartbeat
 * pending (it is skipped by later rounds meanwhile), while the others are heartbeaten and
 * the active count reported on time. (The first version awaited the whole round before
 * the next, so one hanging peer delayed every peer's heartbeat and node_status.peers by
 * the request deadline.)
 */
async function tick(): Promise<void> {
  // One read for the round: its heartbeats leave together.
  const advert = await currentAdvert();
  const started: Promise<void>[] = [];
  for (const p of peers.all()) {
    if (heartbeating.has(p)) continue;
    heartbeating.add(p);
    started.push(
      sendQueue
        .add(() => heartbeat(p, advert))
        .finally(() => {
          heartbeating.delete(p);
          noteActive();
        }),
    );
  }
  for (const url of peers.expire()) log.info('peer expired', { peer: url });
  noteActive();
  await Promise.all(started);
}

async function report(): Promise<void> {
  if (!dirty) return;
  dirty = false;
  try {
    await core.call('peerReport', { peers: peers.active().length, counters: { ...counters }, divergence: sync.divergence ? { ...sync.divergence } : null });
  } catch {
    dirty = true;
  }
}

// Counters change on every request; report them at most 4 times a second.
let lastCounters = '';
const reportTimer = setInterval(() => {
  const now = JSON.stringify(counters);
  if (now !== lastCounters) {
    lastCounters = now;
    dirty = true;
  }
  void report();
}, 250);
const heartbeatTimer = setInterval(() => void tick(), opts.heartbeatIntervalS * 1000);
const syncTimer = setInterval(() => void sync.round(), cfg.peerSyncIntervalS * 1000);

// Startup (SERVICE-SPEC section 1, step 4): learn the peers' keys, then sync with them,
// each as its first heartbeat is answered (a peer that hangs must not hold the others
// back): the first sync ends with the syncs queued when the first answer came, or when
// every first heartbeat failed.
void (async () => {
  await Promise.race([tick(), firstHeartbeatAnswered]);
  await sync.idle();
  startupSyncing = false;
  startupQueued.clear();
  await initialSync();
  log.info('startup sync done', { peers: peers.all().length, active: peers.active().length, payloads_fetched: counters.sync_payloads_fetched });
})();

onShutdown(async () => {
  clearInterval(reportTimer);
  clearInterval(heartbeatTimer);
  clearInterval(syncTimer);
  forwarder.flushAll();
  await Promise.race([sendQueue.onIdle(), new Promise((r) => setTimeout(r, 1000))]);
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  peers.close();
  service.close();
  core.close();
});
