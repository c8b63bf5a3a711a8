/**
 * Listing a peer's contract ids (src/gossip/sync/contract-sets.ts): pages come in ascending
 * order, each after the last id taken. A page that does not move forward ends the list, so
 * a peer cannot send sync back over the same ids, page after page, forever; and a peer
 * inventing new ascending ids forever is stopped at REMOTE_CONTRACT_IDS_MAX, a false answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeCore, fakeSyncEngine, peerRangesAnswer } from '../helpers/sync-fakes.js';
import { PAGE_MAX, REMOTE_CONTRACT_IDS_MAX } from '../../src/gossip/limits.js';

const [A, B, C] = ['aa', 'bb', 'cc'].map((b) => b.repeat(32)) as [string, string, string];

/** Pages a lying peer would answer without end; past this the test fails rather than hangs. */
const PAGES_BEFORE_GIVING_UP = 20;

test('a contract id page that goes back below the last id taken ends the listing: the ids before it are compared, no page is asked after it', async () => {
  let pages = 0;
  const compared: string[] = [];
  const client = {
    call: async (method: string, params: Record<string, unknown>) => {
      switch (method) {
        case 'GetStateRoots':
          return { roots: [], anchor_height: '0', tip_height: '0' };
        case 'GetContractIds': {
          if (++pages > PAGES_BEFORE_GIVING_UP) throw new Error(`asked for page ${pages} of a list that never ends`);
          // An honest first page, then pages that step past the last id and back below it:
          // each starts above the last id taken, and its last id sends the next request back.
          const ids = pages === 1 ? [A, B] : [C, A];
          return { contract_ids: ids.map((id) => Buffer.from(id, 'hex')), more: true };
        }
        case 'GetContractRanges':
          compared.push(Buffer.from(params['contract_id'] as Uint8Array).toString('hex'));
          return peerRangesAnswer([], params);
        case 'GetContractTxids':
          return { txids: [], positions: [], more: false };
        default:
          throw new Error(`unexpected ${method}`);
      }
    },
  };
  const peer = { url: 'http://peer', client, height: null };
  const r = await fakeSyncEngine(fakeCore(), [peer], 1).syncWith(peer as never);
  assert.equal(pages, 2, 'the page that went back is the last asked');
  assert.deepEqual(compared.sort(), [A, B], 'the contracts of the pages before it are compared');
  assert.equal(r.differing, 2);
});

test('a peer inventing new ascending contract ids page after page is stopped at REMOTE_CONTRACT_IDS_MAX: no page asked past it, no id held past it, a false answer counted', async () => {
  const boundPages = REMOTE_CONTRACT_IDS_MAX / PAGE_MAX;
  let pages = 0;
  let compared = 0;
  // One answer for every contract (a whole set of none): the ids are many, each answer the same.
  const none = { ranges: [{ count: 0, listed: true, txids: [], fingerprint: Buffer.alloc(0) }] };
  const client = {
    call: async (method: string, _params: Record<string, unknown>) => {
      switch (method) {
        case 'GetStateRoots':
          return { roots: [], anchor_height: '0', tip_height: '0' };
        case 'GetContractIds': {
          if (++pages > 2 * boundPages) throw new Error(`asked for page ${pages} of a list that never ends`);
          // Full pages of fresh ids, each above the last: ids (page, i) as 32-byte big-endian numbers.
          const ids = Array.from({ length: PAGE_MAX }, (_, i) => {
            const b = Buffer.alloc(32);
            b.writeUInt32BE(pages, 24);
            b.writeUInt32BE(i, 28);
            return b;
          });
          return { contract_ids: ids, more: true };
        }
        case 'GetContractRanges':
          compared++;
          return none;
        default:
          throw new Error(`unexpected ${method}`);
      }
    },
  };
  const peer = { url: 'http://peer', client, height: null };
  const counters: Record<string, number> = {};
  const r = await fakeSyncEngine(fakeCore(), [peer], 16, undefined, undefined, counters).syncWith(peer as never);
  assert.equal(pages, boundPages, 'no page is asked past the bound');
  assert.equal(compared, REMOTE_CONTRACT_IDS_MAX, 'the ids within the bound are compared, none past it');
  assert.equal(r.differing, REMOTE_CONTRACT_IDS_MAX);
  assert.equal(counters['sync_bad_evidence'], 1, 'the list past the bound is counted as a false answer');
});
