/**
 * Which pending payloads sync asks peers' evidence for (peerPending, src/core/peer-handlers.ts):
 * not one whose stored evidence already places or drops it in a block above the processed
 * tip (that block decides it: a fresh light node's 100,000 synced payloads were each asked
 * for again, 4,096 a round, past the serving peer's deadline), but one with no such claim,
 * or with a claim at or below the tip that left it pending (a block the chain left). The
 * cursor goes on from the last payload of a full page, whatever was left out of it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { peerHandlers } from '../../src/core/peer-handlers.js';
import type { PendingPayload } from '../../src/messages/writer.js';

const txid = (n: number): string => n.toString(16).padStart(64, '0');

test('peers are asked for the evidence of pending payloads that no block ahead settles, page by page', async () => {
  const held: PendingPayload[] = [
    { txid: txid(1), kind: 'call', contract_id: 'aa'.repeat(32), outpoint: `${'bb'.repeat(32)}:0`, settles_at: null },
    { txid: txid(2), kind: 'call', contract_id: 'aa'.repeat(32), outpoint: `${'bb'.repeat(32)}:1`, settles_at: 120 }, // ahead: its block decides it
    { txid: txid(3), kind: 'deploy', contract_id: 'cc'.repeat(32), outpoint: null, settles_at: 100 }, // at the tip, still pending: stale
    { txid: txid(4), kind: 'call', contract_id: 'aa'.repeat(32), outpoint: `${'bb'.repeat(32)}:2`, settles_at: 101 }, // ahead
    { txid: txid(5), kind: 'call', contract_id: 'aa'.repeat(32), outpoint: `${'bb'.repeat(32)}:3`, settles_at: 40 }, // below: stale
  ];
  const core = {
    writer: {
      call: async (method: string, p: { after: string; limit: number }) => {
        assert.equal(method, 'pendingPayloads');
        return held.filter((x) => x.txid > p.after).slice(0, p.limit);
      },
    },
    state: { current: async () => ({ height: 100 }) },
  };
  const h = peerHandlers(core as never);
  const ask = (after: string, limit: number) => h.peerPending({ after, limit }) as Promise<{ txids: string[]; next: string }>;

  assert.deepEqual(await ask('', 10), { txids: [txid(1), txid(3), txid(5)], next: '' });
  // Pages of two: the cursor moves to each full page's last payload, asked for or not.
  assert.deepEqual(await ask('', 2), { txids: [txid(1)], next: txid(2) });
  assert.deepEqual(await ask(txid(2), 2), { txids: [txid(3)], next: txid(4) });
  assert.deepEqual(await ask(txid(4), 2), { txids: [txid(5)], next: '' });
});
