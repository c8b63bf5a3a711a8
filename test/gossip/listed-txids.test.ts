/**
 * Listing the txids of a contract this node holds nothing of (GetContractTxids pages,
 * src/gossip/sync/contract-sets.ts): the list stops at the count the peer stated for the
 * contract's whole set, and at SYNC_LISTED_TXIDS_MAX across one sync; a peer answering
 * `more: true` with new txids forever is stopped there, and its list past its own count
 * is a false answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeCore, fakeSyncEngine, peerRangesAnswer } from '../helpers/sync-fakes.js';
import { PAGE_MAX, SYNC_LISTED_TXIDS_MAX } from '../../src/gossip/limits.js';

const CONTRACT = 'cc'.repeat(32);

/** A txid no page gave before: `n` as a 32-byte big-endian number. */
const txidOf = (n: number): Buffer => {
  const b = Buffer.alloc(32);
  b.writeUInt32BE(n, 28);
  return b;
};

/**
 * A peer that says its set of CONTRACT holds `stated` payloads (a one-range answer of
 * `stated` made-up txids is never asked: sync asks only the whole-set count) and then
 * pages txids forever, each page `perPage` new ones with `more: true` whatever the limit
 * asked; `fetched` gathers the txids sync asks payloads for.
 */
function endlessLister(stated: number, perPage: (limit: number) => number, fetched: string[]): { pages: () => number; client: { call: (method: string, params: Record<string, unknown>) => Promise<unknown> } } {
  let pages = 0;
  let next = 0;
  return {
    pages: () => pages,
    client: {
      call: async (method, params) => {
        switch (method) {
          case 'GetStateRoots':
            return { roots: [], anchor_height: '0', tip_height: '0' };
          case 'GetContractIds':
            return { contract_ids: [Buffer.from(CONTRACT, 'hex')], more: false };
          case 'GetContractRanges': {
            const [whole] = (peerRangesAnswer([], params) as { ranges: { count: number }[] }).ranges;
            return { ranges: [{ ...whole, count: stated, listed: false }] };
          }
          case 'GetContractTxids': {
            if (++pages > 64) throw new Error(`asked for page ${pages} of a list that never ends`);
            const n = perPage(params['limit'] as number);
            return { txids: Array.from({ length: n }, () => txidOf(next++)), positions: [], more: true };
          }
          case 'GetPayloads': {
            fetched.push(...(params['txids'] as Uint8Array[]).map((b) => Buffer.from(b).toString('hex')));
            return { payloads: [], answered: 0 };
          }
          default:
            throw new Error(`unexpected ${method}`);
        }
      },
    },
  };
}

const noteListed = fakeCore((method) => (method === 'peerSyncListed' ? { ok: true } : undefined));

test('a txid list that runs on past the count the peer stated stops at it: a false answer, and only the stated txids are fetched', async () => {
  const fetched: string[] = [];
  const lister = endlessLister(1000, (limit) => Math.min(limit, 300), fetched);
  const peer = { url: 'http://peer', client: lister.client, height: null };
  const counters: Record<string, number> = {};
  await fakeSyncEngine(noteListed, [peer], 4, undefined, undefined, counters).syncWith(peer as never);
  assert.equal(lister.pages(), 4, 'pages of 300 up to the 1,000 stated (the last one asked for 100)');
  assert.equal(new Set(fetched).size, 1000, 'the stated 1,000 txids are fetched, none past them');
  assert.equal(counters['sync_bad_evidence'], 1, 'the list past its own count is counted as a false answer');
  assert.equal((peer as { failures?: number }).failures, 1, 'the false answer stays on the peer (the sync does not end as a good one)');
});

test('a page with more txids than asked is a false answer, and the txids past the limit are not taken', async () => {
  const fetched: string[] = [];
  const lister = endlessLister(10, (limit) => limit + 5, fetched);
  const peer = { url: 'http://peer', client: lister.client, height: null };
  const counters: Record<string, number> = {};
  await fakeSyncEngine(noteListed, [peer], 4, undefined, undefined, counters).syncWith(peer as never);
  assert.equal(lister.pages(), 1);
  assert.equal(new Set(fetched).size, 10);
  assert.equal(counters['sync_bad_evidence'], 1);
  assert.equal((peer as { failures?: number }).failures, 1);
});

test('a peer stating a huge count and paging forever is stopped at SYNC_LISTED_TXIDS_MAX, which is no false answer (an honest large set lists the rest next round)', async () => {
  const fetched: string[] = [];
  const lister = endlessLister(0xffff_ffff, (limit) => limit, fetched);
  const peer = { url: 'http://peer', client: lister.client, height: null };
  const counters: Record<string, number> = {};
  await fakeSyncEngine(noteListed, [peer], 4, undefined, undefined, counters).syncWith(peer as never);
  assert.equal(lister.pages(), SYNC_LISTED_TXIDS_MAX / PAGE_MAX, 'no page asked past the bound');
  assert.equal(new Set(fetched).size, SYNC_LISTED_TXIDS_MAX, 'the txids within the bound are fetched, none past it');
  assert.equal(counters['sync_bad_evidence'], 0);
  assert.equal((peer as { failures?: number }).failures, 0, 'a sync that ends well clears the peer\'s failures');
});
