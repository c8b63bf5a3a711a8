/** Bitcoin context built-ins (PROTOCOL section 4) and bytes built-ins, incl. their failures. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemHost, bytes, call, compile, ctx, fromHex, hex, id, serialize, u64 } from '../helpers/vm.js';

const SRC = `contract Ctx {
  pub readonly fn h() -> u64 { return height(); }
  pub readonly fn t() -> key { return txid(); }
  pub readonly fn who() -> key { return caller(); }
  pub readonly fn cid() -> u64 { return call_id(); }
  pub readonly fn me() -> key { return self_id(); }
  pub readonly fn counts() -> u64 { return input_count() * 1000 + output_count(); }
  pub readonly fn inp(i: u64) -> bytes { return outpoint(input_txid(i), input_vout(i)); }
  pub readonly fn outv(i: u64) -> u64 { return output_value(i); }
  pub readonly fn outs(i: u64) -> bytes { return output_script(i); }
  pub readonly fn op(v: u64) -> bytes { return outpoint(txid(), v); }
  pub readonly fn k(b: bytes) -> key { return to_key(b); }
  pub readonly fn hash(b: bytes) -> key { return sha256(b); }
}`;

test('context built-ins return exactly the execution context', () => {
  const host = new MemHost();
  const C = host.deploy(id(1), compile(SRC));
  const c = ctx({
    height: 812_345,
    txid: fromHex('ab'.repeat(32)),
    caller: fromHex('cd'.repeat(32)),
    callId: (1n << 64n) - 1n,
    inputs: [{ txid: fromHex('01'.repeat(32)), vout: 7 }, { txid: fromHex('02'.repeat(32)), vout: 0xffffffff }],
    outputs: [{ value: 2_100_000_000_000_000n, script: Uint8Array.of(0x6a) }, { value: (1n << 64n) - 1n, script: Uint8Array.of(0x51, 0x20) }],
  });
  const v = (fn: string, args: Parameters<typeof call>[3] = []): unknown => {
    const r = call(host, C, fn, args, c);
    assert.equal(r.status, 'executed', serialize(r));
    const x = r.status === 'executed' ? r.result!.value : undefined;
    return x instanceof Uint8Array ? hex(x) : x;
  };
  assert.equal(v('h'), 812_345n);
  assert.equal(v('t'), 'ab'.repeat(32));
  assert.equal(v('who'), 'cd'.repeat(32));
  assert.equal(v('cid'), (1n << 64n) - 1n);
  assert.equal(v('me'), hex(C));
  assert.equal(v('counts'), 2002n);
  assert.equal(v('inp', [u64(0)]), '01'.repeat(32) + '00000007');
  assert.equal(v('inp', [u64(1)]), '02'.repeat(32) + 'ffffffff');
  assert.equal(v('outv', [u64(0)]), 2_100_000_000_000_000n);
  assert.equal(v('outv', [u64(1)]), (1n << 64n) - 1n);
  assert.equal(v('outs', [u64(1)]), '5120');
  assert.equal(v('op', [u64(3)]), 'ab'.repeat(32) + '00000003');
  assert.equal(v('hash', [bytes(new Uint8Array(0))]), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  const fail = (fn: string, args: Parameters<typeof call>[3], code: string, msg: RegExp): void => {
    const r = call(host, C, fn, args, c);
    assert.equal(r.status === 'failed' && r.code, code, serialize(r));
    assert.match(r.status === 'failed' ? r.message : '', msg);
  };
  fail('inp', [u64(2)], 'revert', /input index 2 out of range/);
  fail('outv', [u64(2)], 'revert', /output index 2 out of range/);
  fail('outs', [u64(1n << 60n)], 'revert', /out of range/);
  fail('op', [u64(1n << 32n)], 'arithmetic_overflow', /vout does not fit u32/);
  fail('k', [bytes(new Uint8Array(31))], 'revert', /to_key needs exactly 32 bytes/);
  assert.equal(v('k', [bytes(new Uint8Array(32).fill(9))]), '09'.repeat(32));
});

test('malformed contexts are caller bugs: thrown, not contract failures', () => {
  const host = new MemHost();
  const C = host.deploy(id(1), compile(SRC));
  assert.throws(() => call(host, C, 'h', [], ctx({ height: -1 })), TypeError);
  assert.throws(() => call(host, C, 'h', [], ctx({ callId: -1n })), TypeError);
  assert.throws(() => call(host, C, 'h', [], ctx({ txid: new Uint8Array(31) })), TypeError);
  assert.throws(() => call(host, C, 'h', [], ctx({ inputs: [{ txid: new Uint8Array(32), vout: 2 ** 32 }] })), TypeError);
});
