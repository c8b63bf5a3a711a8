#!/usr/bin/env node
/**
 * The black-box node runner (conformance/README.md, "The node runner"): starts a devnet
 * chain it controls and nodes under test as processes, drives them only through their
 * REST API, live feed and gossip gRPC (as a peer would, ./peer.mjs) and the devnet's HTTP
 * control, plays scripted histories and compares every answer with the one the protocol
 * expects. TAP version 13 on stdout, one line per check, then a summary per scenario and
 * a total line (JUnit XML too with --junit). Exit 0: every check passed; 1: a check
 * failed; 2: it could not start.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as bitcoin from 'bitcoinjs-lib';
import { ECPairFactory } from 'ecpair';
import * as ecc from 'tiny-secp256k1';
import WebSocket from 'ws';
import artifact from './counter.artifact.json' with { type: 'json' };
import { callStamp, codeHash, contractId, deployStamp, signedEnvelope } from './protocol.mjs';
import { PeerClient, PeerKey, encodeBody, headerHash, regtestHeader, startPeerServer } from './peer.mjs';
import { writeJunit } from './junit.mjs';

const USAGE = `usage: node conformance/node/run.mjs [--node-cmd CMD] [--other-cmd CMD] [--chain-cmd CMD] [--only SUBSTRING] [--skip SUBSTRING]... [--junit FILE] [--keep-data]
  --node-cmd   the node under test (node-A), run through the shell with the SVC_* environment of conformance/README.md (default: "node dist/src/main.js")
  --other-cmd  nodes B and C, compared with A (default: the --node-cmd): another implementation, or another version
  --chain-cmd  the devnet chain; prints its base URL as its first stdout line (default: "node dist/src/devnet/chain-main.js --port 0 --initial-blocks 101")
  --only       play only the scenarios whose name contains SUBSTRING (and the first, which deploys the contract)
  --skip       leave out the scenarios whose name contains SUBSTRING (repeatable; never the first)
  --junit      also write the checks as JUnit XML to FILE (a testsuite per scenario, a testcase per check)
  --keep-data  leave the nodes' data directories (their paths are printed)`;

// How long a node may take to answer after its start, and a state to settle: generous, a
// shared 2-core machine under load started the node in over 20 s.
const START_TIMEOUT_MS = 60_000;
const SETTLE_TIMEOUT_MS = 30_000;
// Polling interval while waiting for a node to reach a state: short next to a block check.
const POLL_MS = 100;
// Faucet coins (sats) and the fee each anchor pays: the devnet mines any fee; 1,000 sats
// is above any relay minimum for a one-input, two-output transaction.
const COIN_SATS = 1_000_000;
const FEE_SATS = 1_000n;
// Each node's inbound budget per peer key (proto header, section 5; the environment
// contract): 100 requests a second, 100 more waiting. Above what the nodes' own sync of
// one another asks (svc-node keeps at most 16 requests in flight to a peer), and small
// enough that a flood of FLOOD_REQUESTS sent at once goes over it however its arrival
// spreads: at most 100 + 100 a second + 100 waiting are taken, so some are refused unless
// the flood takes 8 s to arrive (all its answers, the queued ones' too, come within 3 s).
const PEER_RATE_PER_S = 100;
const PEER_QUEUE = 100;
const FLOOD_REQUESTS = 1_000;
// The state root version the lying peers claim (docs/STATE.md, "Root version"): this
// protocol release's, so the node under test takes their (empty) roots as comparable.
const ROOT_VERSION = 3;

function parseArgs(argv) {
  const o = { nodeCmd: 'node dist/src/main.js', otherCmd: null, chainCmd: 'node dist/src/devnet/chain-main.js --port 0 --initial-blocks 101', only: '', skip: [], junit: null, keepData: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const need = () => {
      if (argv[i + 1] === undefined) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--node-cmd') o.nodeCmd = need();
    else if (a === '--other-cmd') o.otherCmd = need();
    else if (a === '--chain-cmd') o.chainCmd = need();
    else if (a === '--only') o.only = need();
    else if (a === '--skip') o.skip.push(need());
    else if (a === '--junit') o.junit = need();
    else if (a === '--keep-data') o.keepData = true;
    else if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${a}\n${USAGE}`);
  }
  return o;
}

// ---------- processes ----------

const started = new Set();

/** Runs `cmd` through the shell in its own process group (so stopping it stops its children). */
function startProcess(cmd, env) {
  const p = spawn(cmd, { shell: true, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  p.lines = [];
  const keep = (d) => {
    // Access-log lines say only what the runner asked: left out of a failure's last lines.
    for (const l of String(d).split('\n')) if (l && !l.includes('"rest::access"')) p.lines.push(l);
    if (p.lines.length > 200) p.lines.splice(0, p.lines.length - 200);
  };
  p.stdout.on('data', keep);
  p.stderr.on('data', keep);
  p.done = new Promise((r) => p.once('exit', (code, sig) => r(code ?? sig)));
  started.add(p);
  p.done.then(() => started.delete(p));
  return p;
}

/** SIGTERM to the process group, SIGKILL after 15 s. */
async function stopProcess(p) {
  if (!started.has(p)) return;
  try {
    process.kill(-p.pid, 'SIGTERM');
  } catch {
    return;
  }
  const t = setTimeout(() => {
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {}
  }, 15_000);
  await p.done;
  // The shell is gone; wait for the rest of its group (a supervisor's workers) too.
  await waitUntil(`process group ${p.pid} gone`, () => {
    try {
      process.kill(-p.pid, 0);
      return false;
    } catch {
      return true;
    }
  }, 20_000).catch(() => undefined);
  clearTimeout(t);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// ---------- HTTP ----------

async function http(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['content-type'] = typeof body === 'string' ? 'text/plain' : 'application/json';
  }
  const r = await fetch(url, init);
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, json, text };
}

/** An error that ends a wait at once (a process that exited), where others are retried until the timeout. */
class Fatal extends Error {}

async function waitUntil(what, fn, timeoutMs = SETTLE_TIMEOUT_MS) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      if (e instanceof Fatal) throw e;
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

// ---------- the devnet chain ----------

class Chain {
  constructor(proc, url) {
    this.proc = proc;
    this.url = url;
  }
  static async start(cmd) {
    const proc = startProcess(cmd, {});
    const url = await waitUntil('the devnet chain URL on its stdout', () => proc.lines.find((l) => /^https?:\/\//.test(l)) ?? (proc.exitCode !== null ? Promise.reject(new Fatal(`chain exited: ${proc.lines.slice(-5).join(' | ')}`)) : null), START_TIMEOUT_MS);
    return new Chain(proc, url.trim());
  }
  async control(what, body) {
    const r = await http('POST', `${this.url}/devnet/${what}`, body);
    if (r.status !== 200) throw new Error(`devnet ${what}: ${r.status} ${r.text}`);
    return r.json;
  }
  mine(blocks = 1) {
    return this.control('mine', { blocks });
  }
  reorg(body) {
    return this.control('reorg', body);
  }
  async tipHeight() {
    return Number((await http('GET', `${this.url}/blocks/tip/height`)).text);
  }
  async broadcast(hex) {
    const r = await http('POST', `${this.url}/tx`, hex);
    if (r.status !== 200) throw new Error(`broadcast: ${r.status} ${r.text}`);
    return r.text.trim();
  }
  async get(path) {
    const r = await http('GET', `${this.url}${path}`);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
    return r;
  }
}

// ---------- the node under test ----------

class Node {
  constructor(name, cmd, chain) {
    this.name = name;
    this.cmd = cmd;
    this.chain = chain;
    this.dataDir = mkdtempSync(join(tmpdir(), `conformance-${name}-`));
    writeFileSync(join(this.dataDir, 'config.toml'), '# the runner configures the node through SVC_* variables\n');
  }
  /** Starts (or restarts, keeping its data directory and ports) and waits until it answers GET /node_status. */
  async start(peers = [], extraEnv = {}) {
    this.peers = peers;
    this.extraEnv = extraEnv;
    this.restPort ??= await freePort();
    this.grpcPort ??= await freePort();
    this.url = `http://127.0.0.1:${this.restPort}`;
    this.grpcUrl = `http://127.0.0.1:${this.grpcPort}`;
    this.proc = startProcess(this.cmd, {
      SVC_CONFIG: join(this.dataDir, 'config.toml'),
      SVC_DB_PATH: join(this.dataDir, 'db'),
      SVC_REST_ADDRESS: `127.0.0.1:${this.restPort}`,
      SVC_BIND_ADDRESS: `127.0.0.1:${this.grpcPort}`,
      SVC_PUBLIC_URL: this.grpcUrl,
      SVC_PEERS: peers.map((p) => (typeof p === 'string' ? p : p.grpcUrl)).join(','),
      SVC_ESPLORA_URL: this.chain.url,
      // A devnet on loopback: check for blocks often, and no request budget to wait on.
      SVC_BLOCK_CHECK_INTERVAL_S: '0.05',
      SVC_ESPLORA_REQUESTS_PER_HOUR: '1000000000',
      SVC_ESPLORA_BURST: '100000',
      SVC_WORKERS_POOL_SIZE: '1',
      SVC_GOSSIP_INBOUND_RATE_PER_S: String(PEER_RATE_PER_S),
      SVC_GOSSIP_INBOUND_QUEUE: String(PEER_QUEUE),
      ...extraEnv,
    });
    await waitUntil(`${this.name} answering GET /node_status`, async () => {
      if (this.proc.exitCode !== null) throw new Fatal(`${this.name} exited (code ${this.proc.exitCode}): ${this.proc.lines.slice(-5).join(' | ')}`);
      return (await http('GET', `${this.url}/node_status`)).status === 200;
    }, START_TIMEOUT_MS);
  }
  stop() {
    this.peerClient?.close();
    this.peerClient = null;
    return stopProcess(this.proc);
  }
  /** A client of the node's gossip service (conformance/node/peer.mjs). */
  peer() {
    return (this.peerClient ??= new PeerClient(this.grpcUrl));
  }
  async status() {
    return (await this.get('/node_status')).json;
  }
  get(path) {
    return http('GET', `${this.url}${path}`);
  }
  post(path, body) {
    return http('POST', `${this.url}${path}`, body);
  }
  /** Waits until the node has processed the chain's tip. */
  async synced() {
    const tip = await this.chain.tipHeight();
    const tipHash = (await this.chain.get(`/block-height/${tip}`)).text.trim();
    await waitUntil(`${this.name} processing height ${tip}`, async () => {
      const s = (await this.get('/v2/state_root')).json;
      return s && s.height === tip && s.block_hash === tipHash;
    });
  }
  /**
   * The live feed (docs/STREAM.md): a `calls` subscription to `txids` on ws://REST/v2/stream.
   * `messages` collects every server message in arrival order; `close()` ends it.
   */
  async feedCalls(txids) {
    const ws = new WebSocket(`ws://127.0.0.1:${this.restPort}/v2/stream`);
    const messages = [];
    ws.on('message', (d) => messages.push(JSON.parse(String(d))));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ type: 'subscribe', id: 'calls', kind: 'calls', txids }));
    // Registered and its current statuses sent: what happens from here on is on the feed.
    await waitUntil(`${this.name}'s feed answering synced`, () => messages.some((m) => m.type === 'synced' && m.sub === 'calls'));
    return { messages, close: () => ws.close() };
  }
  async callStatus(txid) {
    return (await this.get(`/contract_call/${txid}/status`)).json;
  }
  async rootsFrom(height) {
    const tip = await this.chain.tipHeight();
    const out = {};
    for (let h = height; h <= tip; h++) out[h] = (await this.get(`/v2/state_root/${h}`)).json?.state_root ?? null;
    return out;
  }
}

// ---------- the wallet: real regtest P2WPKH transactions ----------

const NETWORK = bitcoin.networks.regtest;
const ECPair = ECPairFactory(ecc);
// Fixed test keys (never real): the wallet's and the caller's.
const WALLET = ECPair.fromPrivateKey(Buffer.alloc(32, 0x11), { network: NETWORK });
const CALLER_SECRET = Buffer.alloc(32, 0x22);
const WALLET_SCRIPT = bitcoin.payments.p2wpkh({ pubkey: Buffer.from(WALLET.publicKey), network: NETWORK }).output;
const WALLET_ADDRESS = bitcoin.address.fromOutputScript(WALLET_SCRIPT, NETWORK);

class Wallet {
  constructor(chain) {
    this.chain = chain;
    this.coins = [];
  }
  /** `n` faucet coins to the wallet, confirmed in one block. */
  async fund(n) {
    for (let i = 0; i < n; i++) {
      const { txid, vout } = await this.chain.control('faucet', { address: WALLET_ADDRESS, sats: COIN_SATS });
      this.coins.push({ txid, vout, value: BigInt(COIN_SATS) });
    }
    await this.chain.mine(1);
  }
  take() {
    const c = this.coins.shift();
    if (!c) throw new Error('the runner ran out of faucet coins');
    return c;
  }
  /** A signed transaction spending `coin`: the stamp at vout 0 (none: a plain spend), the change last. */
  anchor(coin, stamp) {
    const psbt = new bitcoin.Psbt({ network: NETWORK });
    psbt.addInput({ hash: coin.txid, index: coin.vout, witnessUtxo: { script: WALLET_SCRIPT, value: coin.value } });
    if (stamp) psbt.addOutput({ script: stamp, value: 0n });
    psbt.addOutput({ script: WALLET_SCRIPT, value: coin.value - FEE_SATS });
    psbt.signInput(0, { publicKey: Buffer.from(WALLET.publicKey), sign: (h) => Buffer.from(WALLET.sign(h)) });
    psbt.finalizeAllInputs();
    const tx = psbt.extractTransaction();
    return { hex: tx.toHex(), txid: tx.getId() };
  }
  /** The coin evidence of an anchor spending a confirmed `coin` (docs/openapi.yaml, CoinEvidence). */
  async coinEvidence(coin) {
    const tx = (await this.chain.get(`/tx/${coin.txid}/hex`)).text.trim();
    const proof = (await this.chain.get(`/tx/${coin.txid}/merkle-proof`)).json;
    const blockHash = (await this.chain.get(`/block-height/${proof.block_height}`)).text.trim();
    const branch = proof.merkle.map((h) => Buffer.from(h, 'hex').reverse().toString('hex'));
    return { prev_txs: [{ tx, at: { block_hash: blockHash, height: proof.block_height, tx_index: proof.pos, branch } }] };
  }
}

// ---------- TAP ----------

class Tap {
  constructor() {
    this.n = 0;
    this.failed = 0;
    // Every check as {scenario, name, ok, detail, seconds} (JUnit XML); `scenario` is set as each starts.
    this.results = [];
    this.scenario = 'start';
    this.lastAt = Date.now();
    console.log('TAP version 13');
  }
  line(ok, name, detail) {
    this.n++;
    if (!ok) this.failed++;
    const now = Date.now();
    this.results.push({ scenario: this.scenario, name, ok, detail: ok ? null : detail, seconds: (now - this.lastAt) / 1000 });
    this.lastAt = now;
    console.log(`${ok ? 'ok' : 'not ok'} ${this.n} ${name}`);
    if (!ok && detail) {
      console.log('  ---');
      for (const [k, v] of Object.entries(detail)) console.log(`  ${k}: ${JSON.stringify(v)}`);
      console.log('  ...');
    }
  }
  /** One check: `got` equals `expected` as JSON (objects: only the keys `expected` names). */
  check(name, got, expected) {
    this.line(matches(got, expected), name, { expected, got });
  }
}

function matches(got, expected) {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    return got !== null && typeof got === 'object' && Object.keys(expected).every((k) => matches(got[k], expected[k]));
  }
  return JSON.stringify(got) === JSON.stringify(expected);
}

// ---------- scenarios ----------

/** What every scenario shares: the chain, the wallet, nodes A and B, and the contract. */
class World {
  constructor(opts, chain, tap) {
    this.opts = opts;
    this.chain = chain;
    this.tap = tap;
    this.wallet = new Wallet(chain);
    this.nodes = [];
    this.retired = [];
    this.callId = 0;
    this.calls = [];
    // The coin each call's envelope names, by its anchor's txid (a drop spends it elsewhere).
    this.coins = new Map();
    // The counter's value the calls so far must have left: every scenario adds to it.
    this.count = 0;
    // Closers of the peer servers scenarios started, run at the end.
    this.cleanup = [];
  }
  async node(name, peers = [], extraEnv = {}) {
    const n = new Node(name, name === 'node-A' ? this.opts.nodeCmd : (this.opts.otherCmd ?? this.opts.nodeCmd), this.chain);
    this.nodes.push(n);
    await n.start(peers, extraEnv);
    return n;
  }
  /** Stops a node started by a scenario and leaves it out of the later ones. */
  async retire(n) {
    await n.stop();
    this.nodes.splice(this.nodes.indexOf(n), 1);
    this.retired.push(n);
  }
  /** The late joiner, node-C, peered to node-A: started by its scenario, or by a later one played alone (--only). */
  async nodeC() {
    return this.nodes.find((n) => n.name === 'node-C') ?? (await this.node('node-C', [this.nodes[0]]));
  }
  /** Deploys the counter through every node in `to`: anchor built, submitted, broadcast, mined. */
  async deploy(to) {
    const ch = codeHash(artifact);
    const coin = this.wallet.take();
    const tx = this.wallet.anchor(coin, deployStamp(ch));
    const body = { ...artifact, txid: tx.txid, anchor_tx: tx.hex, coin: await this.wallet.coinEvidence(coin) };
    const id = contractId(tx.txid, ch);
    await this.synced(to);
    for (const n of to) {
      const r = await n.post('/deploy_contract', body);
      this.tap.check(`${n.name}: POST /deploy_contract answers 202 pending with the contract id and code hash of PROTOCOL section 2`, { http: r.status, ...r.json }, { http: 202, contract_id: id, txid: tx.txid, code_hash: ch.toString('hex'), status: 'pending' });
      const again = await n.post('/deploy_contract', body);
      this.tap.check(`${n.name}: the same deploy body again answers 200 with the same answer`, { http: again.status, ...again.json }, { http: 200, contract_id: id, status: 'pending' });
    }
    await this.chain.broadcast(tx.hex);
    await this.chain.mine(1);
    this.deployHeight = await this.chain.tipHeight();
    this.contract = id;
    return id;
  }
  /** A call fn(n) (bump unless said): its envelope, its anchor and the REST body, neither submitted nor broadcast. */
  async buildCall(n, fn = 'bump') {
    const coin = this.wallet.take();
    const env = signedEnvelope({ contractId: this.contract, fn, args: [{ type: 'u64', value: String(n) }], secret: CALLER_SECRET, callId: ++this.callId, outpoint: coin });
    const tx = this.wallet.anchor(coin, callStamp(this.contract, env.hash));
    const body = { txid: tx.txid, contract_id: this.contract, payload: env.bytes.toString('base64'), anchor_tx: tx.hex, coin: await this.wallet.coinEvidence(coin) };
    this.coins.set(tx.txid, coin);
    return { coin, env, tx, body, txid: tx.txid, expect: { envelope_hash: env.hash.toString('hex'), caller: env.caller, call_id: String(this.callId) } };
  }
  /** The call as a gossip Payload (proto `Payload`) with `evidence` (proto `Evidence`, or null). */
  payloadOf(call, evidence) {
    return { kind: 'PAYLOAD_KIND_CALL', txid: Buffer.from(call.txid, 'hex'), contract_id: Buffer.from(this.contract, 'hex'), body: call.env.bytes, evidence };
  }
  /** Where a confirmed transaction sits (proto `Inclusion`), from the chain's merkle proof. */
  async inclusion(txid) {
    const proof = (await this.chain.get(`/tx/${txid}/merkle-proof`)).json;
    const blockHash = (await this.chain.get(`/block-height/${proof.block_height}`)).text.trim();
    return { block_hash: Buffer.from(blockHash, 'hex'), height: proof.block_height, tx_index: proof.pos, branch: proof.merkle.map((h) => Buffer.from(h, 'hex').reverse()) };
  }
  /** A call fn(n) (bump unless said) submitted to every node in `to` and broadcast (not mined). */
  async call(to, n, fn = 'bump') {
    const { env, tx, body } = await this.buildCall(n, fn);
    await this.synced(to);
    for (const node of to) {
      const r = await node.post('/contract_call', body);
      this.tap.check(`${node.name}: POST /contract_call ${fn}(${n}) answers 202 pending with the envelope hash of PROTOCOL section 3`, { http: r.status, ...r.json }, { http: 202, txid: tx.txid, contract_id: this.contract, envelope_hash: env.hash.toString('hex'), status: 'pending' });
    }
    await this.chain.broadcast(tx.hex);
    this.calls.push(tx.txid);
    this.lastCall = { envelope_hash: env.hash.toString('hex'), caller: env.caller, call_id: String(this.callId) };
    return tx.txid;
  }
  coinOf(txid) {
    return this.coins.get(txid);
  }
  /**
   * Every node in `nodes` at the chain's tip. Before a submission too: the coin evidence
   * names a block, and a node that has not seen its header yet answers coin_unproven
   * (retryable) rather than taking the payload.
   */
  async synced(nodes) {
    for (const n of nodes) await n.synced();
  }
  /** Every node in `nodes` at the tip; their roots from `from` to the tip equal, one check. */
  async sameRoots(nodes, from, what) {
    await this.synced(nodes);
    const [first, ...rest] = nodes;
    const want = await first.rootsFrom(from);
    const complete = Object.values(want).every((r) => typeof r === 'string' && /^[0-9a-f]{64}$/.test(r));
    this.tap.line(complete, `${first.name}: a state root at every height from ${from} to the tip ${what}`, { got: want });
    for (const n of rest) this.tap.check(`${n.name}: state roots from height ${from} to the tip equal ${first.name}'s ${what}`, await n.rootsFrom(from), want);
  }
  async expectStatus(nodes, txid, expected, what) {
    for (const n of nodes) {
      await n.synced();
      this.tap.check(`${n.name}: call ${txid.slice(0, 8)} ${what}`, await n.callStatus(txid), expected);
    }
  }
  /**
   * As expectStatus, for a payload that arrived after its block: the node answered 202
   * pending, and decides it once it has replayed the blocks from its anchor's, so the
   * check waits (within SETTLE_TIMEOUT_MS) for a status other than pending.
   */
  async expectDecided(nodes, txid, expected, what) {
    for (const n of nodes) {
      await waitUntil(`${n.name} deciding ${txid}`, async () => (await n.callStatus(txid))?.status !== 'pending').catch(() => undefined);
    }
    await this.expectStatus(nodes, txid, expected, what);
  }
  async expectCount(nodes, count, what) {
    for (const n of nodes) this.tap.check(`${n.name}: GET /v2/{id}/count reads ${count} ${what}`, (await n.get(`/v2/${this.contract}/count`)).json?.value, String(count));
  }
}

/**
 * A call bump(n) confirmed `depth` blocks deep, then a reorg of that depth through the
 * devnet's control whose new branch (one block longer) leaves the anchor out: the call is
 * pending again and its effect undone, then decided again where the anchor confirms.
 */
function reorgScenario(depth, n) {
  return {
    name: `reorg of depth ${depth}`,
    async play(w) {
      const [a, b] = w.nodes;
      const txid = await w.call([a, b], n);
      const feeds = await Promise.all([a, b].map((x) => x.feedCalls([txid])));
      await w.chain.mine(depth);
      const height = (await w.chain.tipHeight()) - depth + 1;
      await w.expectStatus([a, b], txid, { status: 'executed', block_height: height, tx_index: 1 }, `is executed ${depth} block(s) deep`);
      await w.expectCount([a, b], w.count + n, `after bump(${n})`);
      await w.chain.reorg({ depth, blocks: depth + 1, drop: [txid] });
      await w.expectStatus([a, b], txid, { status: 'pending', block_height: null, tx_index: null, result: null }, `is pending again once a reorg of depth ${depth} removed its anchor`);
      await w.expectCount([a, b], w.count, `once the reorg undid bump(${n})`);
      await w.sameRoots([a, b], height - 1, `on the new branch of the depth ${depth} reorg`);
      await w.chain.mine(1);
      await w.expectStatus([a, b], txid, { status: 'executed', block_height: await w.chain.tipHeight(), tx_index: 1, result: String(w.count + n) }, `is decided again where its anchor confirmed after the depth ${depth} reorg`);
      w.count += n;
      await w.expectCount([a, b], w.count, `after bump(${n}) on the new branch`);
      await w.sameRoots([a, b], height - 1, `after the depth ${depth} reorg is decided`);
      // The feed told the same story as it happened: pending, executed, pending again, executed.
      const final = await w.chain.tipHeight();
      for (const [i, x] of [a, b].entries()) {
        const calls = () => feeds[i].messages.filter((m) => m.type === 'call' && m.txid === txid);
        await waitUntil(`${x.name}'s feed reporting the call executed at ${final}`, () => calls().some((m) => m.status === 'executed' && m.block_height === final)).catch(() => undefined);
        const story = calls().map((m) => `${m.status}${m.block_height === null ? '' : `@${m.block_height}`}`).filter((v, j, all) => j === 0 || v !== all[j - 1]);
        w.tap.check(`${x.name}: the live feed's calls subscription says pending, executed, pending, executed across the depth ${depth} reorg`, story, ['pending', `executed@${height}`, 'pending', `executed@${final}`]);
        feeds[i].close();
      }
    },
  };
}

/** The gRPC status and PROTOCOL code of a refused peer call (details "<code>: <message>", proto header section 4). */
const refusal = (r) => ({ status: r.ok ? 'OK' : r.status, code: r.ok ? null : r.details.split(':')[0] });
/** One bit of `b` changed. */
const flipped = (b) => {
  const c = Buffer.from(b);
  c[0] ^= 0x01;
  return c;
};
// Headers each lying peer serves in a run, and how far above the run its tip claims to be
// (svc-node takes runs up to 6 blocks below a peer's tip: docs/GOSSIP.md, "Sync").
const LYING_RUN = 8;
const LYING_TIP_MARGIN = 6;
// Blocks mined above node-E's tip for the splicing peer's run (its middle one swapped).
const SPLICED_RUN = 10;

const HOSTILE_PEER = {
  name: 'hostile peer',
  async play(w) {
    const [a, b] = w.nodes;
    const c = await w.nodeC();
    const peer = a.peer();
    const id = await peer.identity();
    w.tap.check('node-A: GetIdentity answers the gossip key node_status names, with a valid proof of possession over the runner\'s challenge', { key: id.key.toString('hex'), proof: id.proofValid }, { key: (await a.status()).gossip_public_key, proof: true });
    // A call whose anchor confirms before any node holds its payload: a peer then sends it.
    const call = await w.buildCall(7);
    await w.chain.broadcast(call.tx.hex);
    await w.chain.mine(1);
    const height = await w.chain.tipHeight();
    await w.synced([a, b, c]);
    const inclusion = await w.inclusion(call.txid);
    const honest = w.payloadOf(call, { anchor_tx: Buffer.from(call.tx.hex, 'hex'), confirmed: inclusion, spent_by: null, coin: [] });
    const liar = new PeerKey();
    const submit = { payloads: [honest] };
    const refused = async (what, req, expected) => w.tap.check(`node-A: ${what}`, refusal(await peer.call('SubmitPayload', req)), expected);
    const unauthorized = { status: 'UNAUTHENTICATED', code: 'unauthorized' };
    await refused('a SubmitPayload without auth is refused UNAUTHENTICATED unauthorized', { body: encodeBody('SubmitPayload', submit), auth: null }, unauthorized);
    const forged = liar.request('SubmitPayload', id.key, submit);
    forged.auth.signature = flipped(forged.auth.signature);
    await refused('a SubmitPayload whose signature does not verify is refused UNAUTHENTICATED unauthorized', forged, unauthorized);
    const otherKey = liar.request('SubmitPayload', id.key, submit);
    otherKey.auth.public_key = new PeerKey().raw;
    await refused('a SubmitPayload signed by another key than the one it names is refused UNAUTHENTICATED unauthorized', otherKey, unauthorized);
    await refused('a SubmitPayload signed for another receiver is refused UNAUTHENTICATED unauthorized', liar.request('SubmitPayload', id.key, submit, { signedFor: new PeerKey().raw }), unauthorized);
    await refused('a SubmitPayload sent 130 s ago (outside the 120 s clock window) is refused UNAUTHENTICATED unauthorized', liar.request('SubmitPayload', id.key, submit, { sentAtMs: Date.now() - 130_000 }), unauthorized);
    await refused('a signed SubmitPayload whose body is not a SubmitPayloadRequest is refused INVALID_ARGUMENT bad_request', liar.request('SubmitPayload', id.key, null, { body: Buffer.from([0xff, 0xff, 0xff, 0xff]) }), { status: 'INVALID_ARGUMENT', code: 'bad_request' });
    // Sizes (proto header, sections 4 and 5): a payload body over 65,536 bytes is refused in
    // its own result; a request message over 65,536 + 1,024 bytes by gRPC before decoding.
    const big = await peer.call('SubmitPayload', liar.request('SubmitPayload', id.key, { payloads: [{ ...honest, evidence: null, body: Buffer.alloc(65_537, 1) }] }));
    w.tap.check('node-A: a payload body of 65,537 bytes is refused payload_too_large in its result (the call OK)', { status: refusal(big).status, accepted: big.res?.results?.[0]?.accepted, error_code: big.res?.results?.[0]?.error_code }, { status: 'OK', accepted: false, error_code: 'payload_too_large' });
    const huge = await peer.call('SubmitPayload', liar.request('SubmitPayload', id.key, { payloads: [0, 1].map(() => ({ ...honest, evidence: null, body: Buffer.alloc(35_000, 1) })) }));
    w.tap.check('node-A: a request message over 66,560 bytes is refused RESOURCE_EXHAUSTED by gRPC before it is decoded', { status: refusal(huge).status, larger: /larger than max/i.test(huge.details ?? '') }, { status: 'RESOURCE_EXHAUSTED', larger: true });
    // Evidence that lies: the anchor's real block, with a merkle branch that does not fold to its root.
    const forwardedBefore = (await a.status()).gossip?.payloads_forwarded;
    const lie = w.payloadOf(call, { anchor_tx: Buffer.from(call.tx.hex, 'hex'), confirmed: { ...inclusion, branch: inclusion.branch.map((h, i) => (i === 0 ? flipped(h) : h)) }, spent_by: null, coin: [] });
    const lied = await peer.call('SubmitPayload', liar.request('SubmitPayload', id.key, { payloads: [lie] }));
    w.tap.check('node-A: a payload whose merkle branch does not fold to its block\'s merkle root is refused bad_evidence in its result (the call OK)', { status: refusal(lied).status, accepted: lied.res?.results?.[0]?.accepted, error_code: lied.res?.results?.[0]?.error_code }, { status: 'OK', accepted: false, error_code: 'bad_evidence' });
    const anotherBlock = await w.chain.get(`/block-height/${height - 1}`);
    const lie2 = w.payloadOf(call, { anchor_tx: Buffer.from(call.tx.hex, 'hex'), confirmed: { ...inclusion, block_hash: Buffer.from(anotherBlock.text.trim(), 'hex') }, spent_by: null, coin: [] });
    const lied2 = await peer.call('SubmitPayload', liar.request('SubmitPayload', id.key, { payloads: [lie2] }));
    w.tap.check('node-A: a payload whose evidence names another block than the one at its height is refused bad_evidence in its result', { accepted: lied2.res?.results?.[0]?.accepted, error_code: lied2.res?.results?.[0]?.error_code }, { accepted: false, error_code: 'bad_evidence' });
    w.tap.check('node-A: holds nothing of the refused and unauthenticated requests (GET /contract_call/{txid}/status answers 404)', (await a.get(`/contract_call/${call.txid}/status`)).status, 404);
    w.tap.check('node-A: forwarded nothing of them (node_status.gossip.payloads_forwarded unchanged)', (await a.status()).gossip?.payloads_forwarded, forwardedBefore);
    w.tap.check('node-C (node-A\'s peer): was not relayed the refused payload', (await c.get(`/contract_call/${call.txid}/status`)).status, 404);
    // The same payload with true evidence, from the same peer: the lies did not spoil it.
    const took = await peer.call('SubmitPayload', liar.request('SubmitPayload', id.key, submit));
    w.tap.check('node-A: the same payload with true evidence, from the same peer, is accepted', { status: refusal(took).status, accepted: took.res?.results?.[0]?.accepted, error_code: took.res?.results?.[0]?.error_code }, { status: 'OK', accepted: true, error_code: '' });
    const r = await b.post('/contract_call', call.body);
    w.tap.check('node-B: the payload posted after its block answers 202', { http: r.status, envelope_hash: r.json?.envelope_hash }, { http: 202, envelope_hash: call.expect.envelope_hash });
    w.calls.push(call.txid);
    const executed = { status: 'executed', block_height: height, tx_index: 1, result: String(w.count + 7), ...call.expect };
    await w.expectDecided([a, b], call.txid, executed, 'sent after its block (node-A by a peer, node-B over REST) is executed at its anchor\'s position');
    // Honest gossip: node-C was sent nothing; it learns the payload from node-A.
    await waitUntil('node-C learning the payload from node-A', async () => (await c.callStatus(call.txid))?.status === 'executed').catch(() => undefined);
    await w.expectStatus([c], call.txid, executed, 'given to node-A only reaches node-C by gossip and is executed there');
    w.count += 7;
    await w.expectCount([a, b, c], w.count, 'after bump(7) given by a peer');
    await w.sameRoots([a, b, c], height - 1, 'after a payload arrived after its block');
    // A pending payload (its anchor in the mempool) must show the coin that pays for its
    // wait (proto header, section 9): none, or another transaction than the one its anchor
    // spends, is refused and held nowhere; the true coin is taken and gossiped.
    const pending = await w.buildCall(10);
    const coinTx = (await w.chain.get(`/tx/${pending.coin.txid}/hex`)).text.trim();
    const coinAt = await w.inclusion(pending.coin.txid);
    const otherCoin = w.coinOf(w.calls[0]);
    const withCoin = (coin) => ({ payloads: [w.payloadOf(pending, { anchor_tx: Buffer.from(pending.tx.hex, 'hex'), confirmed: null, spent_by: null, coin })] });
    await w.synced([a, c]);
    for (const [what, coin, code] of [
      ['no coin', [], 'coin_missing'],
      ['another transaction as its coin', [{ tx: Buffer.from((await w.chain.get(`/tx/${otherCoin.txid}/hex`)).text.trim(), 'hex'), at: await w.inclusion(otherCoin.txid) }], 'bad_coin'],
    ]) {
      const x = await peer.call('SubmitPayload', liar.request('SubmitPayload', id.key, withCoin(coin)));
      w.tap.check(`node-A: a pending payload showing ${what} is refused ${code} in its result`, { accepted: x.res?.results?.[0]?.accepted, error_code: x.res?.results?.[0]?.error_code }, { accepted: false, error_code: code });
    }
    w.tap.check('node-A: holds nothing of the unpaid payload (404)', (await a.get(`/contract_call/${pending.txid}/status`)).status, 404);
    const paid = await peer.call('SubmitPayload', liar.request('SubmitPayload', id.key, withCoin([{ tx: Buffer.from(coinTx, 'hex'), at: coinAt }])));
    w.tap.check('node-A: the same pending payload with the coin its anchor spends is accepted', { accepted: paid.res?.results?.[0]?.accepted, error_code: paid.res?.results?.[0]?.error_code }, { accepted: true, error_code: '' });
    await waitUntil('node-C learning the pending payload from node-A', async () => (await c.callStatus(pending.txid))?.status === 'pending').catch(() => undefined);
    w.tap.check('node-C: the pending payload given to node-A only reaches it by gossip, pending', (await c.callStatus(pending.txid))?.status, 'pending');
    const rb = await b.post('/contract_call', pending.body);
    w.tap.check('node-B: the same call over REST answers 202', rb.status, 202);
    await w.chain.broadcast(pending.tx.hex);
    await w.chain.mine(1);
    w.calls.push(pending.txid);
    await w.expectStatus([a, b, c], pending.txid, { status: 'executed', block_height: height + 1, tx_index: 1, result: String(w.count + 10), ...pending.expect }, 'gossiped while pending is executed where its anchor confirmed');
    w.count += 10;
    await w.sameRoots([a, b, c], height - 1, 'after a payload gossiped while pending');
    // A peer over its budget: one key sends FLOOD_REQUESTS cheap requests at once.
    const flooder = new PeerKey();
    const tip = String(await w.chain.tipHeight());
    const reqs = Array.from({ length: FLOOD_REQUESTS }, () => flooder.request('GetStateRoots', id.key, { from_height: tip, to_height: tip }));
    const floodStart = Date.now();
    const answers = await Promise.all(reqs.map((q) => peer.call('GetStateRoots', q, 60_000)));
    const floodSeconds = ((Date.now() - floodStart) / 1000).toFixed(2);
    const tally = {};
    for (const x of answers) {
      const k = x.ok ? 'OK' : `${x.status} ${x.details.split(':')[0]}`;
      tally[k] = (tally[k] ?? 0) + 1;
    }
    console.log(`# the flood's ${FLOOD_REQUESTS} answers came in ${floodSeconds} s: ${JSON.stringify(tally)}`);
    w.tap.line(Object.keys(tally).every((k) => k === 'OK' || k === 'RESOURCE_EXHAUSTED rate_limited') && (tally['RESOURCE_EXHAUSTED rate_limited'] ?? 0) > 0 && (tally.OK ?? 0) > 0, `node-A: ${FLOOD_REQUESTS} requests sent at once by one peer are answered OK up to its budget, the rest refused RESOURCE_EXHAUSTED rate_limited`, { got: tally });
    const other = await peer.call('GetStateRoots', new PeerKey().request('GetStateRoots', id.key, { from_height: tip, to_height: tip }));
    w.tap.check('node-A: another peer\'s request right after the flood is answered, with node-A\'s root at the tip', { status: refusal(other).status, root: other.res?.roots?.[0]?.state_root?.toString('hex') }, { status: 'OK', root: (await a.get('/v2/state_root')).json?.state_root });
    w.tap.check('node-A: still serves REST clients after the hostile peer (GET /node_status answers 200, not halted)', { http: (await a.get('/node_status')).status, halted: (await a.status()).halted }, { http: 200, halted: false });
  },
};

/**
 * Peers that node-D dials, each serving a header run above the chain's tip that must be
 * refused: one whose second header does not link to its first, one whose headers lack the
 * proof of work their bits ask. (The chain has no block where either run ends, so svc-node
 * would also refuse them when its endpoint does not name that block: from outside, which
 * check refused a run does not show, only that it was refused as false and not taken.) node-D (a fresh node peered to both and to node-A, syncing
 * every second) must pull them, refuse both as false, and follow the real chain.
 */
const HOSTILE_HEADERS = {
  name: 'hostile peer serving headers',
  async play(w) {
    const [a] = w.nodes;
    const headerAt = async (height) => {
      const hash = (await w.chain.get(`/block-height/${height}`)).text.trim();
      return { hash, header: Buffer.from((await w.chain.get(`/block/${hash}/header`)).text.trim(), 'hex') };
    };
    const lyingPeer = (kind) =>
      startPeerServer({
        async GetHeaders({ from_height: from }) {
          const tip = await w.chain.tipHeight();
          const claimedTip = from + LYING_RUN - 1 + LYING_TIP_MARGIN;
          if (from < 1 || from - 1 > tip) return { from_height: from, headers: Buffer.alloc(0), tip_height: Math.max(claimedTip, tip + LYING_RUN) };
          const below = await headerAt(from - 1);
          let prev = below.hash;
          const time = below.header.readUInt32LE(68);
          const run = [];
          for (let i = 0; i < LYING_RUN; i++) {
            const h = regtestHeader(kind === 'unlinked' && i === 1 ? randomBytes(32).toString('hex') : prev, time + 1 + i, kind !== 'no work');
            run.push(h);
            prev = headerHash(h);
          }
          return { from_height: from, headers: Buffer.concat(run), tip_height: claimedTip };
        },
        GetStateRoots: async () => ({ roots: [], anchor_height: '0', tip_height: '0', root_version: ROOT_VERSION }),
        GetContractIds: async () => ({ contract_ids: [], more: false }),
      });
    const unlinked = await lyingPeer('unlinked');
    w.cleanup.push(unlinked.close);
    const noWork = await lyingPeer('no work');
    w.cleanup.push(noWork.close);
    // node-A is node-D's honest peer: it brings the payloads, so D's roots must equal A's.
    const d = await w.node('node-D', [a, unlinked.url, noWork.url], { SVC_PEER_SYNC_INTERVAL_S: '1' });
    await d.synced();
    const askedHeaders = (p) => p.asked.some((x) => x.method === 'GetHeaders');
    await waitUntil('node-D asking both hostile peers for headers', () => askedHeaders(unlinked) && askedHeaders(noWork)).catch(() => undefined);
    w.tap.check('node-D: pulls the header runs of both hostile peers (GetHeaders)', { unlinked: askedHeaders(unlinked), no_work: askedHeaders(noWork) }, { unlinked: true, no_work: true });
    // Each round (every second) asks a liar again until its back-off grows: the count goes on
    // rising, so the check is that it reached one refusal per lying peer.
    await waitUntil('node-D refusing both runs', async () => (await d.status())?.gossip?.sync_bad_evidence >= 2).catch(() => undefined);
    w.tap.line(((await d.status())?.gossip?.sync_bad_evidence ?? 0) >= 2, 'node-D: refuses the runs as false (node_status.gossip.sync_bad_evidence counts at least 2)', { got: (await d.status())?.gossip?.sync_bad_evidence });
    const tip = await w.chain.tipHeight();
    w.tap.check('node-D: its header tip is the chain\'s, not a hostile peer\'s (node_status.chain.header_height)', (await d.status())?.chain?.header_height, tip);
    await w.chain.mine(1);
    await w.synced([a, d]);
    w.tap.check('node-D: follows the chain past the hostile peers, at node-A\'s state root', (await d.get('/v2/state_root')).json?.state_root, (await a.get('/v2/state_root')).json?.state_root);
    await w.retire(d);

    // A run the chain-data endpoint would vouch for: the chain's own headers above the
    // node's tip, ending in the chain's tip, one in the middle swapped for a header with
    // the work that links below but not above. Only the linkage check refuses it. node-E
    // polls its endpoint once at its start (SVC_BLOCK_CHECK_INTERVAL_S=3600) and has no
    // other peer, so that the blocks mined after are above its tip when the liar serves them.
    const spliced = await startPeerServer({
      async GetHeaders({ from_height: from }) {
        const tip = await w.chain.tipHeight();
        if (from < 1 || tip - from + 1 < SPLICED_RUN) return { from_height: from, headers: Buffer.alloc(0), tip_height: tip };
        const run = [];
        for (let h = from; h <= tip; h++) run.push((await headerAt(h)).header);
        const k = Math.floor(run.length / 2);
        run[k] = regtestHeader(headerHash(run[k - 1]), run[k - 1].readUInt32LE(68) + 1, true);
        return { from_height: from, headers: Buffer.concat(run), tip_height: tip + LYING_TIP_MARGIN };
      },
      GetStateRoots: async () => ({ roots: [], anchor_height: '0', tip_height: '0', root_version: ROOT_VERSION }),
      GetContractIds: async () => ({ contract_ids: [], more: false }),
    });
    w.cleanup.push(spliced.close);
    const e = await w.node('node-E', [spliced.url], { SVC_PEER_SYNC_INTERVAL_S: '1', SVC_BLOCK_CHECK_INTERVAL_S: '3600' });
    await e.synced();
    const below = await w.chain.tipHeight();
    const belowHash = (await w.chain.get(`/block-height/${below}`)).text.trim();
    await w.chain.mine(SPLICED_RUN);
    const servedRun = () => spliced.asked.some((x) => x.method === 'GetHeaders' && Number(x.body.from_height) === below + 1);
    await waitUntil('node-E asking the splicing peer for the headers above its tip', servedRun).catch(() => undefined);
    await waitUntil('node-E refusing the spliced run', async () => (await e.status())?.gossip?.sync_bad_evidence >= 1).catch(() => undefined);
    w.tap.check('node-E: refuses as false a run of the chain\'s own headers with one in the middle that does not link (sync_bad_evidence at least 1)', { asked: servedRun(), refused: ((await e.status())?.gossip?.sync_bad_evidence ?? 0) >= 1 }, { asked: true, refused: true });
    w.tap.check('node-E: takes none of that run, not even the headers before the splice (node_status.chain.header_height)', (await e.status())?.chain?.header_height, below);
    w.tap.check('node-E: still answers its state root at its tip', { height: (await e.get('/v2/state_root')).json?.height, block_hash: (await e.get('/v2/state_root')).json?.block_hash }, { height: below, block_hash: belowHash });
    await w.retire(e);
  },
};

/**
 * Payloads arriving with and after their blocks (before is every other scenario): a call
 * whose anchor confirmed before the nodes held its payload is executed at its anchor's
 * position, the blocks above it replayed; one posted while its block is mined too.
 */
const ARRIVALS = {
  name: 'payloads with and after their blocks',
  async play(w) {
    const [a, b] = w.nodes;
    const from = await w.chain.tipHeight();
    const after = await w.buildCall(8);
    await w.chain.broadcast(after.tx.hex);
    await w.chain.mine(3);
    const afterHeight = from + 1;
    await w.synced([a, b]);
    for (const n of [a, b]) {
      const r = await n.post('/contract_call', after.body);
      w.tap.check(`${n.name}: a call posted 3 blocks after its anchor confirmed answers 202`, { http: r.status, envelope_hash: r.json?.envelope_hash }, { http: 202, envelope_hash: after.expect.envelope_hash });
    }
    w.calls.push(after.txid);
    await w.expectDecided([a, b], after.txid, { status: 'executed', block_height: afterHeight, tx_index: 1, result: String(w.count + 8), ...after.expect }, 'posted after its block is executed at its anchor\'s position');
    w.count += 8;
    await w.expectCount([a, b], w.count, 'after a call posted after its block');
    await w.sameRoots([a, b], from, 'after a call posted after its block');
    const withBlock = await w.buildCall(9);
    await w.synced([a, b]);
    await w.chain.broadcast(withBlock.tx.hex);
    const answers = await Promise.all([w.chain.mine(1), ...[a, b].map((n) => n.post('/contract_call', withBlock.body))]);
    for (const [i, n] of [a, b].entries()) w.tap.check(`${n.name}: a call posted while its block is mined answers 202`, answers[i + 1].status, 202);
    w.calls.push(withBlock.txid);
    await w.expectDecided([a, b], withBlock.txid, { status: 'executed', block_height: from + 4, tx_index: 1, result: String(w.count + 9), ...withBlock.expect }, 'posted while its block was mined is executed there');
    w.count += 9;
    await w.sameRoots([a, b], from, 'after a call posted with its block');
  },
};

const SCENARIOS = [
  {
    name: 'deploy then call',
    async play(w) {
      const [a, b] = w.nodes;
      const startHeight = await w.chain.tipHeight();
      const id = await w.deploy([a, b]);
      for (const n of [a, b]) {
        await n.synced();
        w.tap.check(`${n.name}: the deploy is active once its anchor confirmed`, (await n.get(`/contracts/${id}`)).json, { contract_id: id, status: 'active' });
      }
      const txid = await w.call([a, b], 5);
      await w.chain.mine(1);
      const height = await w.chain.tipHeight();
      await w.expectStatus([a, b], txid, { txid, contract_id: id, ...w.lastCall, function: 'bump', status: 'executed', block_height: height, tx_index: 1, result: String(w.count + 5), error: null }, 'is executed at its anchor\'s position');
      w.count += 5;
      await w.expectCount([a, b], w.count, 'after bump(5)');
      await w.sameRoots([a, b], startHeight, 'after a deploy and a call');
    },
  },
  reorgScenario(1, 2),
  reorgScenario(6, 3),
  {
    name: 'failed and refused calls',
    async play(w) {
      const [a, b] = w.nodes;
      // boom(n) writes, emits, then reverts: failed, and nothing of it applies.
      const txid = await w.call([a, b], 4, 'boom');
      await w.chain.mine(1);
      const height = await w.chain.tipHeight();
      await w.expectStatus([a, b], txid, { status: 'failed', block_height: height, tx_index: 1, result: null, error: { code: 'revert' } }, 'boom(4) is failed with the code revert');
      await w.expectCount([a, b], w.count, 'after a failed call');
      await w.sameRoots([a, b], height - 1, 'after a failed call');
      // The same (caller, call_id) as an executed call: taken at intake, decided invalid on
      // chain (docs/ARCHITECTURE.md: the pair is claimed by what confirms first), never run.
      const coin = w.wallet.take();
      const env = signedEnvelope({ contractId: w.contract, fn: 'bump', args: [{ type: 'u64', value: '1' }], secret: CALLER_SECRET, callId: 1, outpoint: coin });
      const tx = w.wallet.anchor(coin, callStamp(w.contract, env.hash));
      const body = { txid: tx.txid, contract_id: w.contract, payload: env.bytes.toString('base64'), anchor_tx: tx.hex, coin: await w.wallet.coinEvidence(coin) };
      await w.synced([a, b]);
      for (const n of [a, b]) {
        const r = await n.post('/contract_call', body);
        w.tap.check(`${n.name}: a call reusing an executed call's (caller, call_id) is taken pending`, { http: r.status, ...r.json }, { http: 202, status: 'pending', envelope_hash: env.hash.toString('hex') });
      }
      await w.chain.broadcast(tx.hex);
      w.calls.push(tx.txid);
      await w.chain.mine(1);
      await w.expectStatus([a, b], tx.txid, { status: 'invalid', block_height: height + 1, tx_index: 1, result: null, error: { code: 'duplicate_call_id' } }, '(a reused call_id) is invalid with the code duplicate_call_id');
      await w.expectCount([a, b], w.count, 'after an invalid call');
      await w.sameRoots([a, b], height - 1, 'after an invalid call');
      // A call to a contract no deploy made.
      const coin2 = w.wallet.take();
      const unknown = '00'.repeat(32);
      const env2 = signedEnvelope({ contractId: unknown, fn: 'bump', args: [{ type: 'u64', value: '1' }], secret: CALLER_SECRET, callId: 1000, outpoint: coin2 });
      const tx2 = w.wallet.anchor(coin2, callStamp(unknown, env2.hash));
      for (const n of [a, b]) {
        const r = await n.post('/contract_call', { txid: tx2.txid, contract_id: unknown, payload: env2.bytes.toString('base64'), anchor_tx: tx2.hex, coin: await w.wallet.coinEvidence(coin2) });
        w.tap.check(`${n.name}: a call to a contract nobody deployed is refused 422 unknown_contract`, { http: r.status, code: r.json?.error?.code }, { http: 422, code: 'unknown_contract' });
      }
    },
  },
  {
    name: 'drop',
    async play(w) {
      const [a, b] = w.nodes;
      const txid = await w.call([a, b], 6);
      const coin = w.coinOf(txid);
      await w.expectStatus([a, b], txid, { status: 'pending', block_height: null }, 'is pending while its anchor is in the mempool');
      // Another transaction spending the call's outpoint confirms: the anchor can never
      // confirm, so the call is dropped (PROTOCOL section 5), and nothing of it applies.
      const height = await w.chain.tipHeight();
      await w.chain.reorg({ depth: 1, blocks: 2, txs: [w.wallet.anchor(coin, null).hex] });
      await w.expectStatus([a, b], txid, { status: 'dropped', block_height: null, tx_index: null, result: null }, 'is dropped once a conflicting spend of its outpoint confirmed');
      await w.expectCount([a, b], w.count, 'after a dropped call');
      await w.sameRoots([a, b], height - 1, 'after a dropped call');
    },
  },
  {
    name: 'late joiner',
    async play(w) {
      const [a, b] = w.nodes;
      const c = await w.node('node-C', [a]);
      // C learns the contract and every call from its peer A (gossip), the chain from the devnet.
      await waitUntil('node-C knowing the contract from its peer', async () => (await c.get(`/contracts/${w.contract}`)).json?.status === 'active', SETTLE_TIMEOUT_MS);
      await waitUntil('node-C at node-A\'s state root', async () => {
        await c.synced();
        return (await c.get('/v2/state_root')).json?.state_root === (await a.get('/v2/state_root')).json?.state_root;
      });
      await w.sameRoots([a, b, c], w.deployHeight, 'for a node started after the calls');
      await w.expectCount([c], w.count, 'on the late joiner');
      for (const txid of w.calls) w.tap.check(`node-C: call ${txid.slice(0, 8)} has node-A's status`, await c.callStatus(txid), await a.callStatus(txid));
    },
  },
  HOSTILE_PEER,
  HOSTILE_HEADERS,
  ARRIVALS,
  {
    name: 'restart',
    async play(w) {
      const [a] = w.nodes;
      await a.synced();
      // `confirmations` grows with the block mined while it is down: the rest must not change.
      const statuses = async () => (await Promise.all(w.calls.map((t) => a.callStatus(t)))).map(({ confirmations, ...rest }) => rest);
      const before = { calls: await statuses(), roots: await a.rootsFrom(w.deployHeight) };
      await a.stop();
      await w.chain.mine(1); // a block it missed while down
      await a.start();
      await a.synced();
      w.tap.check('node-A: after a restart, every call keeps its status', await statuses(), before.calls);
      const roots = await a.rootsFrom(w.deployHeight);
      w.tap.check('node-A: after a restart, the state roots it answered before are unchanged', Object.fromEntries(Object.keys(before.roots).map((h) => [h, roots[h]])), before.roots);
      await w.expectCount([a], w.count, 'after the restart');
      await w.sameRoots(w.nodes, w.deployHeight, 'after node-A restarted and caught up');
    },
  },
  // 144: the deepest reorganisation svc-node rolls back through its undo logs; 150: past
  // that window, it re-derives from its journal (docs/STATE.md, "Reorganisations"). Either
  // way every answer must be the same as for a shallow one.
  reorgScenario(144, 4),
  reorgScenario(150, 5),
];

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(e.message);
    process.exit(2);
  }
  const t0 = Date.now();
  const tap = new Tap();
  let chain;
  let w;
  let fatal = false;
  let bailOut = null;
  try {
    chain = await Chain.start(opts.chainCmd);
    w = new World(opts, chain, tap);
    // Funded and started at once: the scenarios wait for every node to reach the tip anyway.
    // The first failure in this order is the one reported.
    const ready = await Promise.allSettled([w.wallet.fund(20) /* 15 spent by the scenarios, 5 spare */, w.node('node-A'), w.node('node-B')]);
    const failed = ready.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    console.log(`# the chain and nodes A and B started in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch (e) {
    bailOut = `cannot start: ${e.message}`;
    console.log(`Bail out! ${bailOut}`);
    fatal = true;
  }
  let played = 0;
  const timings = [];
  if (!fatal) {
    // Later scenarios build on the state the earlier ones leave (the contract, its count).
    for (const s of SCENARIOS) {
      // The first scenario deploys the contract every other one calls: it always runs.
      if (s !== SCENARIOS[0] && ((opts.only && !s.name.includes(opts.only)) || opts.skip.some((x) => s.name.includes(x)))) continue;
      console.log(`# ${s.name}`);
      played++;
      tap.scenario = s.name;
      tap.lastAt = Date.now();
      const failedBefore = tap.failed;
      const checksBefore = tap.n;
      const ts = Date.now();
      try {
        await s.play(w);
      } catch (e) {
        tap.line(false, `${s.name}: the scenario ran to its end`, { error: e.message });
      }
      timings.push({ name: s.name, checks: tap.n - checksBefore, failed: tap.failed - failedBefore, seconds: (Date.now() - ts) / 1000 });
      if (tap.failed > failedBefore) for (const n of w.nodes) console.log(`# ${n.name} last lines:\n# ${n.proc.lines.slice(-8).join('\n# ')}`);
    }
  }
  const stopping = Date.now();
  // Stopped together: each node's shutdown is mostly waiting for its own processes.
  await Promise.all((w?.nodes ?? []).map((n) => n.stop()));
  for (const close of w?.cleanup ?? []) await close();
  if (chain) await stopProcess(chain.proc);
  for (const n of [...(w?.nodes ?? []), ...(w?.retired ?? [])]) {
    if (opts.keepData) console.log(`# ${n.name} data: ${n.dataDir}`);
    else rmSync(n.dataDir, { recursive: true, force: true, maxRetries: 5 });
  }
  console.log(`# the nodes and the chain stopped in ${((Date.now() - stopping) / 1000).toFixed(1)} s`);
  const seconds = (Date.now() - t0) / 1000;
  const s = seconds.toFixed(1);
  console.log(`1..${tap.n}`);
  // The readable summary: a line per scenario, then the totals.
  const width = Math.max(8, ...timings.map((t) => t.name.length));
  console.log(`# ${'scenario'.padEnd(width)}  checks  failed  seconds`);
  for (const t of timings) console.log(`# ${t.name.padEnd(width)}  ${String(t.checks).padStart(6)}  ${String(t.failed).padStart(6)}  ${t.seconds.toFixed(1).padStart(7)}`);
  if (opts.junit) writeJunit(opts.junit, tap.results, { bailOut, seconds });
  console.log(`# conformance:node: ${tap.n - tap.failed} passed, ${tap.failed} failed of ${tap.n} checks in ${played} scenarios, ${s} s`);
  process.exit(fatal ? 2 : tap.failed ? 1 : 0);
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const p of started) {
      try {
        process.kill(-p.pid, 'SIGKILL');
      } catch {}
    }
    process.exit(130);
  });
}

main();
