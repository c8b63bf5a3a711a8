/**
 * Sync remembers what intake refused (src/gossip/sync.ts): a payload refused for good
 * (intrinsic, packages/protocol/src/rules.ts) is never fetched again, a retryable refusal is
 * fetched again after 1, 2, 4 ... rounds, and a payload taken later is forgotten. Before,
 * a peer listing a payload this node refused made it fetch the payload every round.
 * Fetching: batches, answers that cover part of a request, and requests that fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packPayload, unpackPayload } from '../../src/packed-payload.js';
import { NodeError, toWire } from '@svc-node/protocol/errors';
import { answerRanges, fakeCore, fakeSyncEngine, peerHolding } from '../helpers/sync-fakes.js';
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { RpcFailure } from '../../src/gossip/client.js';
import { LIST_CONCURRENCY } from '../../src/gossip/limits.js';

const CONTRACT = 'cc'.repeat(32);
const INTRINSIC = '01'.repeat(32);
const RETRYABLE = '02'.repeat(32);
const LATER_OK = '03'.repeat(32);

/** The core's peerSubmitMany answer: `take` runs per payload; what it throws is that payload's refusal. */
function eachSubmitted(params: Record<string, unknown>, take: (txid: string) => void): unknown {
  return {
    results: (params['payloads'] as Uint8Array[]).map(unpackPayload).map((p) => {
      try {
        take(p.txid);
        return { ok: true, created: true };
      } catch (e) {
        return { ok: false, error: toWire(e) };
      }
    }),
  };
}

/** A call payload of `contract` as a peer sends it (proto-loader's decoding). */
function wireCall(txid: string, contract = CONTRACT): Record<string, unknown> {
  return { kind: 'PAYLOAD_KIND_CALL', txid: Buffer.from(txid, 'hex'), contract_id: Buffer.from(contract, 'hex'), body: Buffer.of(1) };
}

/** A core holding the payloads in `held` of CONTRACT; what it takes joins them. `other` answers anything else first. */
function coreHolding(held: Set<string>, other?: (method: string, params: Record<string, unknown>) => unknown): ReturnType<typeof fakeCore> {
  return fakeCore(async (method, params) => {
    const answer = await other?.(method, params);
    if (answer !== undefined) return answer;
    switch (method) {
      case 'peerFingerprints':
        return { [CONTRACT]: { count: held.size, fingerprint: '00'.repeat(16) } };
      case 'peerRanges':
        return answerRanges([...held], params['ranges'] as { lower: string; upper: string; list_up_to: number }[]).map((a) => ({ ...a, fingerprint: a.txids ? '' : Buffer.from(a.fingerprint).toString('hex') }));
      case 'peerSubmitMany':
        return eachSubmitted(params, (txid) => void held.add(txid));
      default:
        return undefined;
    }
  });
}

test('sync fetches an intrinsically refused payload once, a retryable one with backoff, and stops once taken', async () => {
  const fetches = new Map<string, number>();
  const laterOkTakenFromRound = 6;
  const taken = new Set<string>();
  let round = 0;
  const peerClient = peerHolding(CONTRACT, ['dd'.repeat(32), INTRINSIC, RETRYABLE, LATER_OK], async (txids) => {
    for (const txid of txids) fetches.set(txid, (fetches.get(txid) ?? 0) + 1);
    return {
      payloads: txids.map((txid) => ({ payload: { kind: 'PAYLOAD_KIND_CALL', txid: Buffer.from(txid, 'hex'), contract_id: Buffer.from(CONTRACT, 'hex'), body: Buffer.of(1) }, position: null })),
      answered: txids.length,
    };
  });
  const core = fakeCore(async (method, params) => {
    switch (method) {
      case 'peerFingerprints':
        return { [CONTRACT]: { count: 1 + taken.size, fingerprint: '00'.repeat(16) } };
      case 'peerRanges':
        // The deploy (txid dd..) is held, and whatever was taken since.
        return answerRanges(['dd'.repeat(32), ...taken], params['ranges'] as { lower: string; upper: string; list_up_to: number }[]).map((a) => ({ ...a, fingerprint: a.txids ? '' : Buffer.from(a.fingerprint).toString('hex') }));
      case 'peerSubmitMany':
        return eachSubmitted(params, (txid) => {
          if (txid === INTRINSIC) throw new NodeError('anchor_mismatch', 'binding fails');
          if (txid === RETRYABLE) throw new NodeError('anchor_not_found', 'not visible here');
          if (round < laterOkTakenFromRound) throw new NodeError('unknown_contract', 'deploy not here yet');
          taken.add(txid);
        });
      default:
        return undefined;
    }
  });
  const peer = { url: 'http://peer', client: peerClient };
  const engine = fakeSyncEngine(core, [peer], 2);
  for (round = 1; round <= 12; round++) await engine.round();
  assert.equal(fetches.get(INTRINSIC), 1, 'an intrinsic refusal is final');
  // Rounds 1, 2, 4, 8: the wait doubles after each refusal.
  assert.equal(fetches.get(RETRYABLE), 4, 'a retryable refusal is retried with backoff');
  // Refused in rounds 1, 2, 4 (waits 1, 2, 4); taken in round 8; never fetched again.
  assert.equal(fetches.get(LATER_OK), 4, 'a payload taken is not fetched again');
  assert.equal(engine.refusedCount, 2);
});

test('sync fetches what the peer holds in batches, asking again for what an answer did not cover, and pushes what the peer lacks unless the peer is catching up', async () => {
  const deploy = 'dd'.repeat(32);
  const peerOnly = ['11', '22', '33'].map((b) => b.repeat(32));
  const localOnly = '44'.repeat(32);
  /** One sync with a peer advertising `peerHeight` while this node is at 1,000. */
  const syncWith = async (peerHeight: number | null) => {
    const asked: string[][] = [];
    const submitted: string[] = [];
    const peerClient = peerHolding(
      CONTRACT,
      [deploy, ...peerOnly],
      async (txids) => {
        // One payload per answer: the asker must ask again for the rest.
        asked.push(txids);
        return { payloads: [{ payload: wireCall(txids[0]!), position: null }], answered: 1 };
      },
      (method, params) => {
        if (method !== 'SubmitPayload') return undefined;
        for (const p of params['payloads'] as { txid: Buffer }[]) submitted.push(Buffer.from(p.txid).toString('hex'));
        return { results: submitted.map(() => ({ accepted: true })) };
      },
    );
    const held = new Set([deploy, localOnly]);
    const core = coreHolding(held, (method, params) =>
      method === 'peerPayloads' ? (params['txids'] as string[]).map((txid) => ({ payload: packPayload({ kind: 'call', txid, contract_id: CONTRACT, body: new Uint8Array([1]), evidence: null }), height: null, tx_index: null })) : undefined,
    );
    const peer = { url: 'http://peer', client: peerClient, height: peerHeight };
    const engine = fakeSyncEngine(core, [peer], 2, undefined, () => 1_000);
    const r = await engine.syncWith(peer as never);
    return { r, asked, submitted, held };
  };

  const { r, asked, submitted, held } = await syncWith(990);
  assert.deepEqual([r.fetched, r.applied, r.pushed], [3, 3, 1]);
  assert.equal(asked.length, 3, 'one request, then again for what each answer left');
  assert.deepEqual([...asked[0]!].sort(), peerOnly);
  assert.deepEqual([asked[1], asked[2]], [asked[0]!.slice(1), asked[0]!.slice(2)]);
  assert.deepEqual(submitted, [localOnly], 'the payload the peer lacks, pushed');
  assert.deepEqual([...held].sort(), [deploy, ...peerOnly, localOnly].sort());
  assert.deepEqual((await syncWith(null)).submitted, [localOnly], 'a peer whose height is not known yet is pushed to');
  // 145 blocks behind (a fresh node holding its blocks back is at 0): it pulls for itself.
  // Its sets are not compared at all: nothing asked of it (its ranges, its payloads), nothing pushed.
  const behind = await syncWith(1_000 - 145);
  assert.deepEqual([behind.r.differing, behind.r.fetched, behind.r.pushed, behind.asked, behind.submitted], [0, 0, 0, [], []], 'a peer catching up: nothing compared, fetched or pushed');
  assert.deepEqual((await syncWith(1_000 - 144)).submitted, [localOnly], 'within the undo window: pushed');
});

test('a contract this node holds nothing of: its calls, over several fetched chunks, wait for its deploy, and every one is taken in one round, fetched at most LIST_CONCURRENCY requests at once', async () => {
  const NEW_CONTRACT = 'ee'.repeat(32);
  const deploy = 'ff'.repeat(32);
  // Past two SYNC_CHUNKs (4,096), so chunks overlap: one's intake while the next is fetched.
  const calls = Array.from({ length: 9_000 }, (_, i) => createHash('sha256').update(`call ${i}`).digest('hex'));
  const listed = [deploy, ...calls];
  let inFlight = 0;
  let mostInFlight = 0;
  let getPayloads = 0;
  const peerClient = peerHolding(
    NEW_CONTRACT,
    listed,
    async (txids) => {
      // Answered a turn later, so requests asked at once overlap and are counted.
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      getPayloads++;
      await new Promise((r) => setImmediate(r));
      inFlight--;
      return {
        payloads: txids.map((txid) => ({
          payload: txid === deploy ? { kind: 'PAYLOAD_KIND_DEPLOY', txid: Buffer.from(txid, 'hex'), body: Buffer.from('{}') } : wireCall(txid, NEW_CONTRACT),
          position: null,
        })),
        answered: txids.length,
      };
    },
    (method) => (method === 'GetContractTxids' ? { txids: listed.map((t) => Buffer.from(t, 'hex')), more: false } : undefined),
  );
  let deployTaken = false;
  const taken = new Set<string>();
  let batches = 0;
  const core = fakeCore(async (method, params) => {
    switch (method) {
      case 'peerSubmitMany': {
        batches++;
        const payloads = (params['payloads'] as Uint8Array[]).map(unpackPayload);
        if (payloads.some((p) => p.kind === 'deploy')) {
          // The deploy takes a while to store: calls handed over meanwhile would be refused.
          await new Promise((r) => setImmediate(r));
          deployTaken = true;
        }
        return eachSubmitted(params, (txid) => {
          if (txid !== deploy && !deployTaken) throw new NodeError('unknown_contract', 'deploy not here yet');
          taken.add(txid);
        });
      }
      default:
        return undefined;
    }
  });
  const peer = { url: 'http://peer', client: peerClient };
  // sync_concurrency 16, as configured by default: payload fetches still go no more than
  // LIST_CONCURRENCY at once, what a peer answers at once (16 at once ran past the
  // serving peer's deadline at 100,000 payloads).
  const engine = fakeSyncEngine(core, [peer], 16);
  const r = await engine.syncWith(peer as never);
  assert.deepEqual([r.fetched, r.applied], [listed.length, listed.length]);
  assert.ok(getPayloads > LIST_CONCURRENCY, `enough GetPayloads requests to overlap (${getPayloads})`);
  assert.equal(mostInFlight, LIST_CONCURRENCY, 'GetPayloads requests in flight at once');
  assert.equal(taken.size, listed.length, 'no call was handed over before its deploy was taken');
  assert.equal(engine.refusedCount, 0);
  assert.ok(batches < listed.length / 32, `calls go to the core in batches (${batches} round trips for ${listed.length} payloads)`);
});

test('a GetPayloads request that fails for a moment (the peer out of list budget) is asked again within the round, one past its deadline once, a malformed answer never', async () => {
  const deploy = 'dd'.repeat(32);
  const calls = ['11', '22', '33'].map((b) => b.repeat(32));
  const run = async (failure: () => Error): Promise<{ asked: number; held: Set<string> }> => {
    let asked = 0;
    const peer = {
      url: 'http://peer',
      client: peerHolding(CONTRACT, [deploy, ...calls], async (txids) => {
        // The first two asks fail; the third is answered.
        if (++asked <= 2) throw failure();
        return { payloads: txids.map((t) => ({ payload: wireCall(t), position: null })), answered: txids.length };
      }),
    };
    const held = new Set([deploy]);
    await fakeSyncEngine(coreHolding(held), [peer], 2).round();
    return { asked, held };
  };
  // Before, the first failure left the three calls to the next round (5 minutes by default).
  const busy = await run(() => new RpcFailure('GetPayloads', grpc.status.RESOURCE_EXHAUSTED, 'rate_limited: too many payload and header fetches from this peer'));
  assert.equal(busy.asked, 3);
  assert.deepEqual([...busy.held].sort(), [...calls, deploy]);
  // Past the deadline: asked once more, not four times (a peer that hangs holds the sync two deadlines).
  const late = await run(() => new RpcFailure('GetPayloads', grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded after 10.000s'));
  assert.equal(late.asked, 2);
  assert.deepEqual([...late.held], [deploy]);
  const malformed = await run(() => new NodeError('bad_request', 'GetPayloads answer: payloads[0].txid must be 32 bytes'));
  assert.equal(malformed.asked, 1, 'a malformed answer is not asked for again this round');
  assert.deepEqual([...malformed.held], [deploy]);
});
