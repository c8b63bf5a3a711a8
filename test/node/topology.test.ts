/**
 * The real node (supervisor, core with writer thread and pool, REST front, gossip) on
 * ephemeral ports: health, status, restart of a crashed child, clean shutdown, secrets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNode } from '../helpers/node-process.js';
import { PeerClient } from '../../src/gossip/client.js';
import { Signer } from '../../src/gossip/auth.js';
import { Db } from '../../src/writer/db.js';
import { meta } from '../../src/writer/store/index.js';

const TOKEN = 'tok-' + 'q'.repeat(40);
const SEED = '7f'.repeat(32);

test('three roles come up; health, status, gRPC; a killed REST child restarts; SIGTERM exits 0 and closes the DB', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-topo-'));
  const node = await startNode({ dataDir, env: { SVC_API_TOKEN: TOKEN, SVC_GOSSIP_PRIVATE_KEY: SEED, SVC_NODE_ID: 'topo-1' } });
  try {
    const health = await fetch(`${node.restUrl}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    assert.ok(health.headers.get('x-request-id'), 'request id on every response');

    const status = await fetch(`${node.restUrl}/node_status`);
    assert.equal(status.status, 200);
    const s = (await status.json()) as Record<string, unknown>;
    assert.equal(s['node_id'], 'topo-1');
    assert.equal(s['version'], '0.1.0');
    assert.match(String(s['gossip_public_key']), /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(s).includes(TOKEN) && !JSON.stringify(s).includes(SEED), 'no secrets in node_status');

    const missing = await fetch(`${node.restUrl}/nope`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'not_found');

    // gRPC answers on bind_address.
    // Peer requests must be signed: a throwaway Ed25519 identity.
    const client = new PeerClient(`http://127.0.0.1:${node.grpcPort}`, new Signer(new Uint8Array(32).fill(3)), 10_000);
    const hb = await client.call('Heartbeat', { node_id: 'tester', url: '', height: '0' });
    assert.equal(hb.node_id, 'topo-1');
    client.close();

    // Kill the REST child: the supervisor restarts it and the node answers again.
    const started = await node.waitFor((l) => l.msg === 'child started' && l['role'] === 'rest');
    const relisten = node.waitForNext((l) => l.msg === 'listening' && l['role'] === 'rest', 20_000, 'REST restart');
    process.kill(Number(started['child_pid']), 'SIGKILL');
    const again = await relisten;
    assert.ok(node.lines.some((l) => l.msg === 'child exited' && l['role'] === 'rest'));
    const health2 = await fetch(`http://${String(again['address'])}/health`);
    assert.equal(health2.status, 200);
  } finally {
    const code = await node.stop();
    assert.equal(code, 0, 'SIGTERM exits 0');
  }
  assert.ok(node.lines.some((l) => l.msg === 'database closed'));
  const text = node.raw.join('\n');
  assert.ok(!text.includes(TOKEN), 'api_token never logged');
  assert.ok(!text.includes(SEED), 'gossip_private_key never logged');

  // The database was closed cleanly: it opens again and holds what the node wrote.
  const db = await Db.open(join(dataDir, 'db'));
  assert.equal(meta.nodeId.decode((await db.get(meta.nodeId.key))!), 'topo-1');
  await db.close();
});

test('stable gossip identity: the public key follows from gossip_private_key', async () => {
  const node = await startNode({ env: { SVC_GOSSIP_PRIVATE_KEY: SEED } });
  try {
    const s = (await (await fetch(`${node.restUrl}/node_status`)).json()) as { gossip_public_key: string };
    const { makeIdentity } = await import('../../src/gossip/identity.js');
    assert.equal(s.gossip_public_key, makeIdentity(Buffer.from(SEED, 'hex')).publicKeyHex);
  } finally {
    assert.equal(await node.stop(), 0);
  }
});
