/**
 * State roots of another root version (docs/STATE.md, "Root version") are not compared
 * for divergence: a node of an earlier release publishes roots of the contracts alone,
 * which differ from this node's at every block that decided a call with no divergence
 * of state, and each such "divergence" would cost a re-derivation of the whole journal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeCore, fakeSyncEngine } from '../helpers/sync-fakes.js';
import { STATE_ROOT_VERSION } from '@svc-node/protocol/state/decisions';

const HASH = 'ab'.repeat(32);
const rootsOf = (fill: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ height: from + i, block_hash: HASH, state_root: fill.repeat(32) })).filter((r) => r.height <= 5);

function peer(version: number | undefined): { url: string; active: boolean; client: { call: (m: string, p: Record<string, unknown>) => Promise<unknown> } } {
  return {
    url: `http://v${String(version)}`,
    active: true,
    client: {
      call: async (method, p) => {
        if (method !== 'GetStateRoots') throw new Error(`unexpected ${method}`);
        const roots = rootsOf('22', Number(p['from_height']), Number(p['to_height'])).map((r) => ({ height: String(r.height), block_hash: Buffer.from(r.block_hash, 'hex'), state_root: Buffer.from(r.state_root, 'hex') }));
        return { roots, anchor_height: '0', tip_height: '5', ...(version === undefined ? {} : { root_version: version }) };
      },
    },
  };
}

test('roots of another version (an earlier release: root_version absent) are not compared; roots of this version are', async () => {
  const core = fakeCore((method, p) => (method === 'peerStateRoots' ? { roots: rootsOf('11', p['from'] as number, p['to'] as number), anchor_height: 0, tip_height: 5 } : undefined));
  for (const [version, diverges] of [[undefined, false], [0, false], [1, false], [STATE_ROOT_VERSION, true]] as const) {
    const p = peer(version);
    const engine = fakeSyncEngine(core, [p], 1);
    const report = await engine.checkRoots(p as never);
    assert.equal(report !== null, diverges, `root_version ${String(version)}`);
    if (report) assert.equal(report.height, 0, 'every height differs: the first is reported');
  }
});
