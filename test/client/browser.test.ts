/**
 * The SDK in headless Chromium (docs/CLI.md, "The SDK in a browser"): the browser bundle
 * (scripts/browser-bundle.mjs, as `npm run bundle:browser` builds it) runs in a page served
 * over loopback, on another origin than a devnet node that allows it (cors_origins). The
 * page (a) reads a contract field through REST and verifies its proof (and refuses the
 * same answer with its value changed), (b) follows the live feed and sees a new call
 * arrive, (c) builds and signs a call envelope without sending it; Node then checks that
 * signature with the node's own codec. A page on an origin the node does not allow cannot
 * read, and is told why. A page's WebSocket cannot stop reading, so a feed consumer that
 * falls behind closes it and resumes from its cursor: checked with 12,000 events.
 *
 * A screenshot of the first page is the test's artefact, taken whether the test passes or
 * fails (then it shows how far the page got): written to the test's temp dir, whose path
 * the test prints (kept after the run), and copied to artifacts/browser/browser-sdk.png
 * (ignored by git), where the last run's stays.
 *
 * Chromium is Debian's package (/usr/bin/chromium; .ci/run installs it), driven by
 * playwright-core, which downloads no browser of its own.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import type { Artifact } from '@svc-node/protocol/contract';
import type { SvcClient } from '@svc-node/client';
import { client, compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced, waitUntil } from '../helpers/devnet-node.js';
import { decodePayload, decodeEnvelope, verifyEnvelopeSignature, envelopeHash, toHex } from '@svc-node/protocol';
import { repoRoot } from '../helpers/paths.js';

const CHROMIUM = '/usr/bin/chromium';
// Skipped only where Debian's chromium is not installed (a developer's machine without
// it): the test needs a real browser, and CI installs the package (.ci/run), so it runs there.
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`;

/** What the page runs: the browser bundle's two entry points, driven from the test through window.svc. */
const PAGE_SCRIPT = `
import { NodeClient, stream, verifyFieldAnswer, ClientError, decodeEnvelope, verifyEnvelopeSignature, toHex } from './packages/client/src/browser.ts';
import { buildCall } from './packages/client/src/browser-sign.ts';
const out = document.getElementById('out');
const show = (line) => { out.textContent += line + '\\n'; };
const q = new URLSearchParams(location.search);
const nodeUrl = q.get('node');
const contractId = q.get('contract');
const seen = [];
const abi = JSON.parse(q.get('abi'));
window.svc = {
  seen,
  async readField() {
    const a = await new NodeClient(nodeUrl).readFieldProven(contractId, 'count', undefined, { abi });
    show('(a) count = ' + JSON.stringify(a.value) + ' at height ' + a.height + ', proof verified under ' + a.state_root.slice(0, 16) + '...');
    let forged = 'accepted';
    try {
      verifyFieldAnswer({ ...a, value: String(BigInt(a.value) + 1n) }, { abi });
    } catch (e) {
      forged = e instanceof ClientError ? e.code : String(e);
    }
    show('(a) the same answer with count + 1: ' + forged);
    return { value: a.value, height: a.height, forged };
  },
  follow(fromHeight) {
    const ac = new AbortController();
    window.svc.stopFeed = () => ac.abort();
    (async () => {
      for await (const m of stream(nodeUrl, { subscriptions: [{ kind: 'calls', id: 'c', contractId, fromHeight }], signal: ac.signal })) {
        seen.push(m);
        if (m.type === 'call') show('(b) feed: call ' + m.txid.slice(0, 16) + '... ' + m.status);
        if (m.type === 'synced') show('(b) feed: synced at height ' + m.height);
      }
    })().catch((e) => seen.push({ type: 'error', message: String(e) }));
  },
  // Holds the iterator after 'synced' until go(): the page's socket cannot stop reading, so
  // 10,000 messages behind it closes (4009), and the iterator resumes from its last cursor.
  slowFollow(emitterId, fromHeight, want) {
    let go;
    const st = { synced: false, reconnects: [], got: [], done: false, gate: new Promise((r) => (go = r)) };
    st.go = go;
    window.svc.slow = st;
    (async () => {
      const subscriptions = [{ kind: 'events', id: 'e', contractId: emitterId, fromHeight }];
      for await (const m of stream(nodeUrl, { subscriptions, reconnectDelayMs: 50, onReconnect: (code) => st.reconnects.push(code) })) {
        if (m.type === 'synced' && !st.synced) {
          st.synced = true;
          await st.gate;
        }
        if (m.type === 'event') st.got.push(m.block_height + ':' + m.tx_index + ':' + m.log_index);
        if (st.got.length === want) break;
      }
      st.done = true;
      show('(b) slow consumer: ' + st.got.length + ' events, reconnected after close ' + st.reconnects.join(', '));
    })().catch((e) => (st.error = String(e)));
  },
  sign(secretHex) {
    const secret = Uint8Array.from(secretHex.match(/../g), (h) => parseInt(h, 16));
    const c = buildCall({ contractId, function: 'bump', args: ['u64:7'], abi, callerSecret: secret, outpoint: { txid: '11'.repeat(32), vout: 0 } });
    const ok = verifyEnvelopeSignature(decodeEnvelope(c.bytes));
    show('(c) signed, not sent: envelope ' + toHex(c.envelopeHash).slice(0, 16) + '..., ' + c.bytes.length + ' bytes, signature ' + (ok ? 'verifies' : 'FAILS'));
    return { payload: c.payload, envelopeHash: toHex(c.envelopeHash), ok };
  },
};
document.title = 'svc SDK in the browser';
`;

const PAGE_HTML = `<!doctype html><meta charset="utf-8"><title>svc SDK</title>
<style>body{font:14px monospace;margin:16px}pre{white-space:pre-wrap}</style>
<h3>svc-node SDK in headless Chromium</h3><pre id="out"></pre><script type="module" src="/page.js"></script>`;

let devnet: DevnetChainHandle;
let node: NodeProcess;
let svc: SvcClient;
let artifact: Artifact;
let contractId: string;
let emitterId: string;
let pageServer: Server;
let pageOrigin: string;
let pageJs: Uint8Array;
let tmp: string;

before(async () => {
  if (skip) return;
  tmp = mkdtempSync(join(tmpdir(), 'svc-browser-'));
  const { browserBuildOptions } = (await import(pathToFileURL(join(repoRoot, 'scripts', 'browser-bundle.mjs')).href)) as { browserBuildOptions: (o: object) => object };
  const esbuild = await import('esbuild');
  const built = await esbuild.build(browserBuildOptions({ stdin: { contents: PAGE_SCRIPT, sourcefile: 'page.js' } }) as Parameters<typeof esbuild.build>[0]);
  pageJs = built.outputFiles![0]!.contents;
  pageServer = createServer((req, res) => {
    const js = req.url === '/page.js';
    res.writeHead(200, { 'content-type': js ? 'text/javascript' : 'text/html; charset=utf-8' });
    res.end(js ? pageJs : PAGE_HTML);
  });
  await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;

  devnet = await startDevnet();
  node = await startDevnetNode(devnet, { env: { SVC_CORS_ORIGINS: pageOrigin } });
  const wallet = testWallet(48);
  await fund(devnet, wallet, 12);
  svc = client(node, devnet, wallet);
  artifact = compileFixture('counter.svc');
  contractId = (await svc.deploy(artifact)).contractId;
  emitterId = (await svc.deploy(compileFixture('emitter.svc'))).contractId;
  devnet.chain.mine(1);
  const t = await svc.call({ contractId, function: 'bump', args: ['u64:5'], abi: artifact.abi });
  devnet.chain.mine(1, [t.anchor.txid]);
  await waitSynced(node, devnet);
});

after(async () => {
  await node?.stop();
  await devnet?.close();
  await new Promise((r) => (pageServer ? pageServer.close(r) : r(undefined)));
});

test('in headless Chromium the SDK reads and verifies a field, follows the feed to a new call, and signs a call without sending it', { skip, timeout: 120_000 }, async (t) => {
  const { chromium } = await import('playwright-core');
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 900, height: 360 } });
  try {
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const q = new URLSearchParams({ node: node.restUrl, contract: contractId, abi: JSON.stringify(artifact.abi) });
    await page.goto(`${pageOrigin}/?${q}`);
    await page.waitForFunction('"svc" in window');

    // (a) a cross-origin REST read, its proof verified in the page; a changed value is refused.
    const read = await page.evaluate('window.svc.readField()');
    assert.deepEqual(read, { value: '5', height: devnet.chain.height, forged: 'bad_proof' });

    // (b) the live feed: synced first, then a call made after the page subscribed.
    const from = devnet.chain.height + 1;
    await page.evaluate(`window.svc.follow(${from})`);
    await page.waitForFunction("window.svc.seen.some((m) => m.type === 'synced')", undefined, { timeout: 20_000 });
    const t = await svc.call({ contractId, function: 'bump', args: ['u64:2'], abi: artifact.abi });
    devnet.chain.mine(1, [t.anchor.txid]);
    const arrived = await page.waitForFunction(`window.svc.seen.find((m) => m.type === 'call' && m.txid === '${t.anchor.txid}' && m.status === 'executed')`, undefined, { timeout: 30_000 });
    assert.equal(((await arrived.jsonValue()) as { block_height: number }).block_height, from);
    await page.evaluate('window.svc.stopFeed()');

    // (c) signed in the page, checked here by the node's codec (tiny-secp256k1, not the page's noble).
    const secret = '42'.repeat(32);
    const signed = (await page.evaluate(`window.svc.sign('${secret}')`)) as { payload: string; envelopeHash: string; ok: boolean };
    assert.equal(signed.ok, true, 'the page verifies its own signature');
    const bytes = decodePayload(signed.payload);
    const envelope = decodeEnvelope(bytes);
    assert.equal(verifyEnvelopeSignature(envelope), true, "the node's codec verifies the page's signature");
    assert.equal(toHex(envelopeHash(bytes)), signed.envelopeHash);
    assert.equal(toHex(envelope.contractId), contractId);
    assert.deepEqual(pageErrors, []);

    // A page on an origin the node does not allow (localhost is not 127.0.0.1) cannot read,
    // and the SDK's error says what to change.
    const other = await browser.newPage();
    await other.goto(`${pageOrigin.replace('127.0.0.1', 'localhost')}/?${q}`);
    await other.waitForFunction('"svc" in window');
    const refused = String(await other.evaluate('window.svc.readField().then(() => "read", (e) => e.code + ": " + e.message)'));
    assert.match(refused, /^unreachable: node unreachable at .*the node does not allow this page's origin http:\/\/localhost:\d+: its cors_origins\)$/);
    await other.close();
  } finally {
    const shot = join(tmp, 'browser-sdk.png');
    await page.screenshot({ path: shot });
    const kept = join(repoRoot, 'artifacts', 'browser');
    mkdirSync(kept, { recursive: true });
    copyFileSync(shot, join(kept, 'browser-sdk.png'));
    t.diagnostic(`screenshot: ${shot} (and artifacts/browser/browser-sdk.png)`);
    await browser.close();
  }
});

test("in Chromium a feed consumer that falls 10,000 messages behind closes the page's socket (4009) and resumes from its cursor, missing nothing", { skip, timeout: 120_000 }, async () => {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${pageOrigin}/?${new URLSearchParams({ node: node.restUrl, contract: contractId, abi: '[]' })}`);
    await page.waitForFunction('"svc" in window');
    // Six calls of 2,000 events each in one block: 12,000 messages, 2,000 past the point
    // where the page closes its socket, so those come only through the resumed subscription.
    const want = 12_000;
    const from = devnet.chain.height + 1;
    await page.evaluate(`window.svc.slowFollow('${emitterId}', ${from}, ${want})`);
    await page.waitForFunction('window.svc.slow.synced', undefined, { timeout: 20_000 });
    const abi = compileFixture('emitter.svc').abi;
    const txids: string[] = [];
    for (let i = 0; i < 6; i++) txids.push((await svc.call({ contractId: emitterId, function: 'burst', args: [], abi })).anchor.txid);
    devnet.chain.mine(1, txids);
    // The node counts the page's connection until the page closes it.
    await waitUntil(node, async () => /^svc_stream_connections 0$/m.test(await (await fetch(`${node.restUrl}/metrics`)).text()), "the page's feed socket to close", 60_000);
    await page.evaluate('window.svc.slow.go()');
    await page.waitForFunction('window.svc.slow.done || window.svc.slow.error', undefined, { timeout: 60_000 });
    const st = (await page.evaluate('({ got: window.svc.slow.got, reconnects: window.svc.slow.reconnects, error: window.svc.slow.error })')) as { got: string[]; reconnects: number[]; error?: string };
    assert.equal(st.error, undefined);
    assert.deepEqual(st.reconnects, [4009]);
    assert.equal(st.got.length, want);
    assert.equal(new Set(st.got).size, want, 'no event twice');
    const key = (p: string): number[] => p.split(':').map(Number);
    for (let i = 1; i < st.got.length; i++) {
      const [a, b] = [key(st.got[i - 1]!), key(st.got[i]!)];
      assert.ok(a[0]! < b[0]! || (a[0] === b[0] && (a[1]! < b[1]! || (a[1] === b[1] && a[2]! < b[2]!))), `in order at ${i}: ${st.got[i - 1]} then ${st.got[i]}`);
    }
  } finally {
    await browser.close();
  }
});
