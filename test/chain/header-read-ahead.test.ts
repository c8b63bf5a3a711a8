/**
 * While the writer applies an event of header-only blocks, the header follower reads and
 * hashes the next event's headers (HeaderFollower.applyBlocks, `ahead`). What it applies
 * must still be the node's header chain at that moment: a chain that changed meanwhile
 * (a reorganisation of the headers taken from the endpoint or a peer) is applied as the
 * new chain, never as the headers read before the change, which would also write the
 * old branch's headers back over the new ones. And read ahead, each run of headers is
 * read from the writer once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeaderFollower, type FollowerSink } from '../../src/chain/header-follower.js';
import { REGTEST_POW } from '@svc-node/protocol/activation';
import { logger } from '../../src/log.js';
import { Writer } from '../../src/writer/writer.js';
import { writerFollowerSink } from '../helpers/follower-sink.js';
import { REGTEST_GENESIS, Rng, World } from '../helpers/sim-world.js';

/** Blocks per event: small, so that a short chain takes several. */
const EVENT = 5;

/** A writer holding `world`'s headers, the follower's sink onto it, and the header reads the follower made through it. */
async function lightWriter(dir: string, world: World): Promise<{ w: Writer; sink: FollowerSink; reads: { from: number; count: number }[] }> {
  const w = await Writer.open(join(dir, 'db'), 'ahead', logger('test'));
  await w.initAnchor({ height: 0, hash: REGTEST_GENESIS });
  await w.putHeaders(1, world.chain.slice(1).map((b) => b.header), false);
  const reads: { from: number; count: number }[] = [];
  const direct = writerFollowerSink(w);
  const sink: FollowerSink = {
    ...direct,
    headers: (from, count) => {
      reads.push({ from, count });
      return direct.headers(from, count);
    },
  };
  return { w, sink, reads };
}

async function assertOnChain(w: Writer, world: World): Promise<void> {
  const s = w.status();
  assert.equal(s.processedHeight, world.tip.height);
  assert.equal(s.processedHash, world.tip.hash);
  const stored = await w.ledger.headers(1, world.tip.height);
  for (let h = 1; h <= world.tip.height; h++) {
    assert.equal(Buffer.compare(stored[h - 1]!, world.chain[h]!.header), 0, `the stored header at ${h} is the chain's`);
    assert.equal((await w.ledger.stateRootAt(h))?.block_hash, world.chain[h]!.hash, `the block applied at ${h} is the chain's`);
  }
}

test('header-only events read ahead: each run of headers is read once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-read-ahead-'));
  const world = new World(new Rng(31), 31);
  for (let i = 0; i < 4 * EVENT + 2; i++) world.mine(1);
  const { w, sink, reads } = await lightWriter(dir, world);
  try {
    await new HeaderFollower({ pow: REGTEST_POW, source: world.headerSource(), maxHeaderBlocksPerEvent: EVENT, sink }).applyBlocks();
    await assertOnChain(w, world);
    const runs = reads.filter((r) => r.count > 1).map((r) => `${r.from}+${r.count}`);
    assert.deepEqual(runs, ['1+5', '6+5', '11+5', '16+5', '21+2'], 'every event\'s headers read once, in order');
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('headers read ahead of a header chain that then changed are not applied: the new chain is, and its headers stay', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-read-ahead-'));
  const world = new World(new Rng(32), 32);
  for (let i = 0; i < 4 * EVENT; i++) world.mine(1);
  const { w, sink, reads } = await lightWriter(dir, world);
  const oldAt8 = world.chain[8]!.hash;
  let readAhead: Promise<unknown> | null = null;
  let applied = 0;
  const watched: FollowerSink = {
    ...sink,
    headers: (from, count) => {
      const r = sink.headers(from, count);
      // The second event's headers, asked for while the first is applied.
      if (from === EVENT + 1 && count === EVENT && applied === 0) readAhead = r;
      return r;
    },
    apply: async (u) => {
      const answer = await sink.apply(u);
      if (++applied === 1) {
        assert.ok(readAhead, 'the next event was read while the first was applied');
        await readAhead;
        // Then the chain changes from height 8 (inside the event read ahead), longer than before.
        world.reorg(4 * EVENT - 7, 4 * EVENT - 4);
        await w.putHeaders(8, world.chain.slice(8).map((b) => b.header), true);
      }
      return answer;
    },
  };
  try {
    await new HeaderFollower({ pow: REGTEST_POW, source: world.headerSource(), maxHeaderBlocksPerEvent: EVENT, sink: watched }).applyBlocks();
    assert.notEqual(world.chain[8]!.hash, oldAt8, 'the chain changed from height 8');
    assert.equal(world.tip.height, 4 * EVENT + 3);
    await assertOnChain(w, world);
    assert.ok(reads.filter((r) => r.from === EVENT + 1 && r.count === EVENT).length >= 2, 'the second event was read again after the change');
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
