/** The gossip identity (SERVICE-SPEC section 5): stable with gossip_private_key, ephemeral otherwise. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startNode, type NodeProcess } from '../helpers/node-process.js';
import { makeIdentity } from '../../src/gossip/identity.js';
import { Signer } from '../../src/gossip/auth.js';
import { PeerClient } from '../../src/gossip/client.js';
import { freePort, status, urlOf } from '../helpers/gossip.js';

const SEED = '5a'.repeat(32);

/** The key node_status shows and the key the gRPC service answers a signed heartbeat with. */
async function keysOf(node: NodeProcess, port: number): Promise<[string, string]> {
  const pc = new PeerClient(urlOf(port), new Signer(new Uint8Array(randomBytes(32))), 10_000);
  try {
    const hb = await pc.call('Heartbeat', { node_id: 'tester', url: '', height: '0' });
    return [(await status(node)).gossip_public_key, Buffer.from(hb.public_key).toString('hex')];
  } finally {
    pc.close();
  }
}

async function run(dataDir: string, env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const node = await startNode({ dataDir, env: { SVC_BIND_ADDRESS: `127.0.0.1:${port}`, SVC_PUBLIC_URL: urlOf(port), ...env } });
  try {
    const [a, b] = await keysOf(node, port);
    assert.equal(a, b, 'node_status and the peer service show the same key');
    return a;
  } finally {
    assert.equal(await node.stop(), 0);
  }
}

test('a stable identity survives a restart; an ephemeral one changes', async () => {
  const stableDir = mkdtempSync(join(tmpdir(), 'svc-id-stable-'));
  const ephDir = mkdtempSync(join(tmpdir(), 'svc-id-eph-'));
  const [s1, e1] = await Promise.all([run(stableDir, { SVC_GOSSIP_PRIVATE_KEY: SEED }), run(ephDir, {})]);
  const [s2, e2] = await Promise.all([run(stableDir, { SVC_GOSSIP_PRIVATE_KEY: SEED }), run(ephDir, {})]);
  assert.equal(s1, makeIdentity(Buffer.from(SEED, 'hex')).publicKeyHex);
  assert.equal(s2, s1, 'same seed, same key after restart');
  assert.notEqual(e2, e1, 'no seed: a new key at every start');
  assert.notEqual(e1, s1);
});
