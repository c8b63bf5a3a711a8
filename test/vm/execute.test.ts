/** execute(): atomicity across frames, readonly, caller semantics, write order, trace hook, determinism. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { execute } from '../../src/vm/execute.js';
import { fieldKey, encodeStorageValue } from '@svc-node/protocol/vm/storage-layout';
import { MemHost, call, compile, ctx, hex, id, key, serialize, u64, str, load } from '../helpers/vm.js';

const INNER = `contract Inner {
  field v: u64;
  field who: key;
  event Set(v: u64);
  pub fn set(x: u64) -> u64 { v = x; who = caller(); emit Set(x); return x * 2; }
  pub readonly fn get() -> u64 { return v; }
  pub fn boom() { v = 1; require(false, "inner boom"); }
}`;
const OUTER = `contract Outer {
  field log: map<u64, string>;
  pub fn then_fail(inner: key, x: u64) { let r = call<u64>(inner, "set", x); log[r] = "done"; require(false, "outer fails after the callee wrote"); }
  pub fn ok(inner: key, x: u64) -> u64 { log[x] = "z"; log[x + 1] = "a"; return call<u64>(inner, "set", x); }
  pub fn inner_fails(inner: key) { log[1] = "x"; call(inner, "boom"); }
  pub readonly fn ro_calls_write(inner: key) -> u64 { return call<u64>(inner, "set", 1); }
  pub readonly fn ro_calls_read(inner: key) -> u64 { return call<u64>(inner, "get"); }
  pub fn wrong_ret(inner: key) -> bool { return call<bool>(inner, "get"); }
  pub fn wrong_args(inner: key) -> u64 { return call<u64>(inner, "set", "seven"); }
  pub fn missing_fn(inner: key) { call(inner, "nope"); }
}`;

function setup() {
  const host = new MemHost();
  const I = host.deploy(id(1), compile(INNER));
  const O = host.deploy(id(2), compile(OUTER));
  return { host, I, O };
}

test('a failure in any frame discards every write and event of every frame', () => {
  const { host, I, O } = setup();
  let r = call(host, O, 'then_fail', [key(I), u64(5)]);
  assert.equal(r.status === 'failed' && r.message, 'outer fails after the callee wrote');
  r = call(host, O, 'inner_fails', [key(I)]);
  assert.equal(r.status === 'failed' && r.message, 'inner boom');
  assert.equal(host.store.size, 0, 'nothing applied');
});

test('successful nested call: writes sorted by contract id then key, events in order, caller = calling contract', () => {
  const { host, I, O } = setup();
  const r = call(host, O, 'ok', [key(I), u64(7)]);
  assert.equal(r.status, 'executed', serialize(r));
  if (r.status !== 'executed') return;
  assert.deepEqual(r.result, u64(14));
  const order = r.writes.map((w) => `${hex(w.contractId).slice(-2)}:${Buffer.from(w.key).toString('latin1').replace(/[^\x20-\x7e]/g, '.')}`);
  assert.deepEqual(order, ['01:v', '01:who', '02:log.........', '02:log.........']);
  const sorted = [...r.writes].sort((a, b) => Buffer.compare(Buffer.from(a.contractId), Buffer.from(b.contractId)) || Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
  assert.deepEqual(r.writes, sorted);
  assert.equal(hex(r.writes[1]!.value!), hex(O), 'caller inside a cross-contract frame is the calling contract');
  assert.deepEqual(r.events.map((e) => e.name), ['Set']);
  const innerAbi = compile(INNER).abi;
  assert.equal(hex(r.writes[0]!.key), hex(fieldKey(innerAbi, 'v', null)));
  assert.equal(hex(r.writes[0]!.value!), hex(encodeStorageValue(u64(7))));
  const outerAbi = compile(OUTER).abi;
  assert.equal(hex(r.writes[2]!.key), hex(fieldKey(outerAbi, 'log', u64(7))));
  assert.equal(hex(r.writes[2]!.value!), hex(encodeStorageValue(str('z'))));
});

test('readonly: a readonly frame cannot call a writing function; cross-contract type checks', () => {
  const { host, I, O } = setup();
  let r = call(host, O, 'ro_calls_write', [key(I)]);
  assert.equal(r.status === 'failed' && r.code, 'readonly_violation');
  r = call(host, O, 'ro_calls_read', [key(I)]);
  assert.equal(r.status, 'executed');
  r = call(host, O, 'wrong_ret', [key(I)]);
  assert.equal(r.status === 'failed' && r.code, 'bad_arguments');
  r = call(host, O, 'wrong_args', [key(I)]);
  assert.equal(r.status === 'failed' && r.code, 'bad_arguments');
  r = call(host, O, 'missing_fn', [key(I)]);
  assert.equal(r.status === 'failed' && r.code, 'unknown_function');
  r = call(host, O, 'missing_fn', [key(id(55))]);
  assert.equal(r.status === 'failed' && r.code, 'unknown_contract');
  // internal helpers are not callable from outside
  const h = new MemHost();
  const C = h.deploy(id(3), compile('contract H { pub fn a() -> u64 { return b(); } fn b() -> u64 { return 1; } }'));
  assert.equal(call(h, C, 'b', []).status === 'failed' && 'unknown_function', 'unknown_function');
});

test('trace hook sees every instruction; results are identical with and without it', () => {
  const { host, I, O } = setup();
  const steps: string[] = [];
  const traced = execute({ contractId: O, function: 'ok', args: [key(I), u64(3)], context: ctx(), host }, { trace: (s) => steps.push(`${s.depth}:${s.pc}:${s.op}`) });
  const plain = execute({ contractId: O, function: 'ok', args: [key(I), u64(3)], context: ctx(), host });
  assert.equal(serialize(traced), serialize(plain));
  assert.equal(steps.length, plain.instructions);
  assert.ok(steps.some((s) => s.startsWith('2:')), 'nested frame traced at depth 2');
});

test('determinism: repeated runs and runs in worker threads give byte-identical results', async () => {
  const { host, I, O } = setup();
  const runs = Array.from({ length: 3 }, () => serialize(execute({ contractId: O, function: 'ok', args: [key(I), u64(9)], context: ctx(), host })));
  assert.equal(new Set(runs).size, 1);
  const workerFile = fileURLToPath(new URL('./exec-worker.js', import.meta.url));
  const results = await Promise.all(
    [false, true].map(
      (clone) =>
        new Promise<string>((resolve, reject) => {
          const programs = clone ? [load(compile(INNER)), load(compile(OUTER))] : undefined;
          const w = new Worker(workerFile, { workerData: { inner: INNER, outer: OUTER, programs } });
          w.once('message', (m: string) => {
            void w.terminate();
            resolve(m);
          });
          w.once('error', reject);
        }),
    ),
  );
  const local = new MemHost();
  const { runScenario } = await import('./exec-worker-lib.js');
  const here = runScenario(INNER, OUTER, local);
  assert.equal(results[0], here);
  assert.equal(results[1], here);
});

test('Buffers from the host or the codec come out unshared: plain Uint8Arrays, stored values in Buffers of their own', () => {
  const host = new MemHost();
  const C = host.deploy(id(9), compile(`contract B {
    field last: bytes;
    event Got(b: bytes, k: key);
    pub fn put(b: bytes) -> bytes { let old = last; last = b; emit Got(b, sha256(b)); return old; }
  }`));
  const arg = Buffer.from('abcdef', 'hex');
  let r = call(host, C, 'put', [{ type: 'bytes', value: arg }]);
  assert.equal(r.status, 'executed');
  // the host now returns Buffers (as RocksDB does)
  const orig = host.storageGet.bind(host);
  host.storageGet = (c, k) => { const v = orig(c, k); return v ? Buffer.from(v) : undefined; };
  r = execute({ contractId: C, function: 'put', args: [{ type: 'bytes', value: Buffer.from('01', 'hex') }], context: ctx(), host });
  assert.equal(r.status, 'executed');
  if (r.status !== 'executed') return;
  for (const x of [r.result!.value, r.writes[0]!.key, r.events[0]!.params[0]!.value, r.events[0]!.params[1]!.value]) {
    assert.equal(Object.getPrototypeOf(x), Uint8Array.prototype);
  }
  // A stored value is a Buffer (the writer hands it to RocksDB without a view), never a
  // slice of a shared pool or of the caller's memory: its ArrayBuffer is its own.
  const stored = r.writes[0]!.value!;
  assert.ok(Buffer.isBuffer(stored));
  assert.equal(stored.byteOffset, 0);
  assert.equal(stored.buffer.byteLength, stored.length);
  assert.equal(hex(r.result!.value as Uint8Array), 'abcdef');
  arg[0] = 0; // mutating the caller's buffer afterwards changes nothing stored
  assert.equal(hex(host.storageGet(C, r.writes[0]!.key)!), 'abcdef');
});

test('a call touching many contracts (state index past 8 contracts) writes each one once, sorted', () => {
  const host = new MemHost();
  const leaf = compile(`contract Leaf {
    field next: key;
    field hits: u64;
    pub fn init(n: key) { next = n; }
    pub fn run(n: u64) -> u64 {
      hits = hits + 1;
      if n == 0 { return 0; }
      return call<u64>(next, "run", n - 1) + 1;
    }
  }`);
  const ids = Array.from({ length: 12 }, (_, i) => host.deploy(id(100 - i), leaf)); // descending ids
  ids.forEach((c, i) => assert.equal(call(host, c, 'init', [key(ids[(i + 1) % ids.length]!)]).status, 'executed'));
  const r = call(host, ids[0]!, 'run', [u64(30)]);
  assert.equal(r.status, 'executed', serialize(r));
  if (r.status !== 'executed') return;
  assert.equal(r.writes.length, 12);
  const cids = r.writes.map((w) => hex(w.contractId));
  assert.deepEqual(cids, [...cids].sort());
  // 31 frames over 12 contracts: the first 7 contracts ran 3 times, the others twice
  const hits = new Map(r.writes.map((w) => [hex(w.contractId), Number(Buffer.from(w.value!).readBigUInt64BE())]));
  ids.forEach((c, i) => assert.equal(hits.get(hex(c)), i < 7 ? 3 : 2));
});
