/**
 * A store of an earlier layout (format 5: state roots of root version 1, no decision
 * leaves; format 6: roots of version 2) is re-derived from its journal when the writer
 * opens (docs/STATE.md, "Root version"): it publishes the same roots of this release's
 * version and decisions as a node that applied the blocks itself, proofs of its decisions
 * are served, and the layout is marked current.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { Writer } from '../../src/writer/writer.js';
import { logger } from '../../src/log.js';
import { STORE_FORMAT, blockDecisions, meta, stateRoots } from '../../src/writer/store/index.js';
import { STATE_ROOT_VERSION, decodeDecision } from '@svc-node/protocol/state/decisions';
import { taggedHash } from '@svc-node/protocol/hash';

test('a format-5 store (version-1 roots, no decision leaves) is re-derived at open to the roots a node applying the blocks publishes', async () => {
  const b = await LedgerBench.open();
  const dbPath = join(b.dir, 'db');
  let writer: Writer | null = null;
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const ok = b.callRecord(cid, 'bump', [{ type: 'u64', value: 5n }], id32('upgrade', 1), 1n);
    const boom = b.callRecord(cid, 'boom', [{ type: 'u64', value: 1n }], id32('upgrade', 2), 1n);
    await b.ledger.acceptCalls([ok.rec, boom.rec]);
    await b.block([ok.tx, boom.tx]);
    const decidedAt = b.height;
    await b.block([]);
    await b.ledger.flushBlocks();
    const want = await Promise.all([decidedAt, b.height].map((h) => b.ledger.stateRootAt(h)));

    // What the previous release left: roots of the contracts alone, no leaves, format 5.
    const ops = [{ type: 'put' as const, key: meta.format.key, value: meta.format.encode(5) }];
    for (const r of want) {
      ops.push({ type: 'put' as const, key: stateRoots.key(r!.height), value: stateRoots.encode({ height: r!.height, block_hash: r!.block_hash, state_root: r!.contracts_root! }) });
      ops.push({ type: 'del' as const, key: blockDecisions.key(r!.height) } as never);
    }
    await b.ledger.db.batch(ops);
    await b.ledger.db.close();

    writer = await Writer.open(dbPath, 'upgrade-test', logger('test'));
    const l = writer.ledger;
    for (const r of want) assert.deepEqual(await l.stateRootAt(r!.height), r, `root at ${r!.height}`);
    assert.equal(l.stateRoot, want[1]!.state_root);
    assert.equal(meta.format.decode((await l.db.get(meta.format.key))!), STORE_FORMAT);
    const proof = (await l.decisionProof(decidedAt, boom.rec.txid))!;
    assert.equal(decodeDecision(Buffer.from(proof.leaf!.value, 'hex')).status, 'failed');
    assert.equal((await l.call(ok.rec.txid))?.result, '5');
  } finally {
    await writer?.db.close().catch(() => undefined);
    await b.close().catch(() => undefined);
  }
});

test('a format-6 store (version-2 roots) is re-derived at open to this release\'s roots', async () => {
  assert.equal(STATE_ROOT_VERSION, 3, 'this test writes the roots of the version before this one');
  const b = await LedgerBench.open();
  const dbPath = join(b.dir, 'db');
  let writer: Writer | null = null;
  try {
    const cid = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const ok = b.callRecord(cid, 'bump', [{ type: 'u64', value: 5n }], id32('upgrade6', 1), 1n);
    await b.ledger.acceptCalls([ok.rec]);
    await b.block([ok.tx]);
    await b.block([]);
    await b.ledger.flushBlocks();
    const heights = [b.height - 1, b.height];
    const want = await Promise.all(heights.map((h) => b.ledger.stateRootAt(h)));

    // What release 2 left: the same parts folded under version byte 2, format 6.
    const ops = [{ type: 'put' as const, key: meta.format.key, value: meta.format.encode(6) }];
    for (const r of want) {
      const v2 = Buffer.from(taggedHash('SVC/root', Uint8Array.of(2), Buffer.from(r!.contracts_root!, 'hex'), Buffer.from(r!.decisions_root!, 'hex'))).toString('hex');
      assert.notEqual(v2, r!.state_root);
      ops.push({ type: 'put' as const, key: stateRoots.key(r!.height), value: stateRoots.encode({ ...r!, state_root: v2 }) });
    }
    await b.ledger.db.batch(ops);
    await b.ledger.db.close();

    writer = await Writer.open(dbPath, 'upgrade-test-6', logger('test'));
    const l = writer.ledger;
    for (const r of want) assert.deepEqual(await l.stateRootAt(r!.height), r, `root at ${r!.height}`);
    assert.equal(l.stateRoot, want[1]!.state_root);
    assert.equal(meta.format.decode((await l.db.get(meta.format.key))!), STORE_FORMAT);
    assert.equal((await l.call(ok.rec.txid))?.result, '5');
  } finally {
    await writer?.db.close().catch(() => undefined);
    await b.close().catch(() => undefined);
  }
});
