/**
 * Events are stored in runs of EVENT_CHUNK per key (src/records.ts). Paging from
 * any cursor, with or without a name filter, must give exactly the events after it in
 * (height, tx_index, log_index) order, across run and block boundaries; and a page read
 * must not need a whole block's events (checked: runs hold at most EVENT_CHUNK).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerBench, compileContract, id32 } from '../helpers/ledger-fixture.js';
import { events, type StoredEventRow } from '../../src/writer/store/index.js';

const { EVENT_CHUNK } = events;
import { valueToJson, type Value } from '@svc-node/protocol/value';

test('event pages from any cursor across runs and blocks; runs hold at most EVENT_CHUNK events', async () => {
  const b = await LedgerBench.open();
  try {
    const emitter = await b.deploy(compileContract('test/fixtures/contracts/emitter.svc').artifact as never);
    const counter = await b.deploy(compileContract('test/fixtures/contracts/counter.svc').artifact as never);
    const caller = id32('events-caller', 1);
    let callId = 1n;
    // Block 1: two bursts (4,000 events) around a counter call; block 2: one burst.
    await b.block([
      await b.call(emitter, 'burst', [], caller, callId++),
      await b.call(counter, 'bump', [{ type: 'u64', value: 3n }], caller, callId++),
      await b.call(emitter, 'burst', [], caller, callId++),
    ]);
    await b.block([await b.call(emitter, 'burst', [], caller, callId++)]);
    const all = await b.ledger.events(emitter, 0, 0xffffffff, null, 10_000, null);
    assert.equal(all.length, 6_000);
    const pos = (e: { block_height: number; tx_index: number; log_index: number }): [number, number, number] => [e.block_height, e.tx_index, e.log_index];
    for (let i = 1; i < all.length; i++) {
      const a = pos(all[i - 1]!);
      const z = pos(all[i]!);
      assert.ok(a[0] < z[0] || (a[0] === z[0] && (a[1] < z[1] || (a[1] === z[1] && a[2] < z[2]))), `order at ${i}`);
    }
    // Cursors at run edges and inside runs, in both blocks.
    for (const at of [0, 1, EVENT_CHUNK - 1, EVENT_CHUNK, EVENT_CHUNK + 1, 1_999, 2_000, 2_001, 3_999, 4_000, 5_998]) {
      const page = await b.ledger.events(emitter, 0, 0xffffffff, pos(all[at]!), 100, null);
      assert.deepEqual(page, all.slice(at + 1, at + 101), `page after event ${at}`);
    }
    // A name filter and a height range.
    assert.deepEqual(await b.ledger.events(emitter, 0, 0xffffffff, pos(all[10]!), 5, 'E'), all.slice(11, 16));
    assert.deepEqual(await b.ledger.events(emitter, all[5_999]!.block_height, all[5_999]!.block_height, null, 3, null), all.slice(4_000, 4_003));
    assert.deepEqual(await b.ledger.events(emitter, 0, 0xffffffff, pos(all[5_999]!), 10, null), []);
    // Every stored run holds at most EVENT_CHUNK events.
    const emitterId = Buffer.from(emitter, 'hex');
    const runs = await b.ledger.db.range(events.fromHeight(emitterId, 0), events.end(emitterId));
    assert.equal(runs.length, Math.ceil(4_000 / EVENT_CHUNK) + Math.ceil(2_000 / EVENT_CHUNK)); // runs per contract and block
    for (const r of runs) assert.ok(events.decode(emitter, events.heightOf(r.key), r.value, () => undefined).length <= EVENT_CHUNK);
  } finally {
    await b.close();
  }
});

test('stored event runs keep every value type exactly, named from the ABI or by position', () => {
  const txid = Uint8Array.from({ length: 32 }, (_, i) => i);
  const values: Value[] = [
    { type: 'u64', value: (1n << 64n) - 1n },
    { type: 'u64', value: 0n },
    { type: 'i64', value: -(1n << 63n) },
    { type: 'i64', value: (1n << 63n) - 1n },
    { type: 'u128', value: (1n << 128n) - 1n },
    { type: 'u128', value: (1n << 64n) + 5n },
    { type: 'bool', value: true },
    { type: 'bool', value: false },
    { type: 'string', value: '' },
    { type: 'string', value: 'grüße \u{1F600}' },
    { type: 'bytes', value: new Uint8Array(0) },
    { type: 'bytes', value: Uint8Array.of(0, 255, 7) },
    { type: 'key', value: Uint8Array.from({ length: 32 }, (_, i) => 255 - i) },
  ];
  const rows: StoredEventRow[] = [
    [3, 0, 'Every', values, txid],
    [3, 1, 'Empty', [], txid],
    [9, 0, 'Ünïcode', values.slice(0, 2), txid],
  ];
  const names = values.map((_, i) => `p${i}`);
  const cid = 'ab'.repeat(32);
  const hex = Buffer.from(txid).toString('hex');
  const decoded = events.decode(cid, 42, events.encode(rows), (e) => (e === 'Every' ? names : undefined));
  assert.deepEqual(decoded, [
    { name: 'Every', params: Object.fromEntries(values.map((v, i) => [`p${i}`, valueToJson(v)])), txid: hex, block_height: 42, tx_index: 3, log_index: 0, contract_id: cid },
    { name: 'Empty', params: {}, txid: hex, block_height: 42, tx_index: 3, log_index: 1, contract_id: cid },
    { name: 'Ünïcode', params: { '0': valueToJson(values[0]!), '1': valueToJson(values[1]!) }, txid: hex, block_height: 42, tx_index: 9, log_index: 0, contract_id: cid },
  ]);
});
