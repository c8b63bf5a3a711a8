/**
 * Which peers sync talks to, and when (src/gossip/sync/engine.ts): a round syncs with active
 * peers only, and a peer that turns active is synced with once the syncs queued before it
 * have ended. Before, a round went through every configured peer in turn: behind a peer
 * that accepts connections and never answers, the startup sync (and a light node's first
 * blocks, held for it) waited for the request deadline whenever an active peer's sync
 * failed first (a CI failure of hardening/gossip-backlog).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeCore, fakeSyncEngine } from '../helpers/sync-fakes.js';

interface FakePeer {
  url: string;
  active: boolean;
  client: { call: (method: string) => Promise<unknown> };
}

/** Each call a peer receives, in order, as "<url> <method>". */
function peerAnswering(url: string, active: boolean, calls: string[], gate?: { reached: () => void; open: Promise<void> }): FakePeer {
  const peer: FakePeer = {
    url,
    active,
    client: {
      call: async (method: string): Promise<unknown> => {
        calls.push(`${url} ${method}`);
        // A peer that has not answered a heartbeat does not answer this either.
        if (!peer.active) return new Promise(() => undefined);
        if (gate) {
          gate.reached();
          await gate.open;
        }
        switch (method) {
          case 'GetStateRoots':
            return { roots: [], anchor_height: '0', tip_height: '0' };
          case 'GetContractIds':
            return { contract_ids: [], more: false };
          default:
            throw new Error(`unexpected ${method}`);
        }
      },
    },
  };
  return peer;
}

test('a sync round skips a peer that has not answered a heartbeat, and syncs with it once it turns active', async () => {
  const calls: string[] = [];
  const synced: string[] = [];
  const silent = peerAnswering('http://silent', false, calls);
  const live = peerAnswering('http://live', true, calls);
  const engine = fakeSyncEngine(fakeCore(), [silent, live], 2, (url) => synced.push(url));
  // Before: the round asked the silent peer and never ended.
  await engine.round();
  assert.deepEqual(synced, ['http://live']);
  assert.ok(!calls.some((c) => c.startsWith('http://silent')), `the silent peer was asked: ${calls.join(', ')}`);
  silent.active = true;
  engine.peerActive(silent as never);
  await engine.idle();
  assert.deepEqual(synced, ['http://live', 'http://silent']);
});

test('a peer that turns active during a round is synced with after it, once; idle() waits for both', async () => {
  const calls: string[] = [];
  const synced: string[] = [];
  let open!: () => void;
  let reached!: () => void;
  const inFirst = new Promise<void>((r) => (reached = r));
  const first = peerAnswering('http://first', true, calls, { reached, open: new Promise<void>((r) => (open = r)) });
  const late = peerAnswering('http://late', false, calls);
  const engine = fakeSyncEngine(fakeCore(), [first, late], 2, (url) => synced.push(url));
  const round = engine.round();
  // Joined, not doubled.
  assert.equal(engine.round(), round);
  // The round is held in its sync with `first` (its answers wait for the gate).
  await inFirst;
  late.active = true;
  engine.peerActive(late as never);
  engine.peerActive(late as never);
  const idle = engine.idle();
  open();
  await round;
  assert.deepEqual(synced, ['http://first'], 'the round covers the peers active when it began');
  await idle;
  assert.deepEqual(synced, ['http://first', 'http://late']);
  assert.equal(calls.filter((c) => c === 'http://late GetStateRoots').length, 1, 'synced with once');
});
