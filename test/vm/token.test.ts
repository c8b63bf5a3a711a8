import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemHost, serialize, bytes, call, compileFile, ctx, fromHex, id, key, u128, u64 } from '../helpers/vm.js';

const tx = (n: number): Uint8Array => fromHex(n.toString(16).padStart(2, '0').repeat(32));
const op = (t: Uint8Array, v: number): Uint8Array => {
  const b = new Uint8Array(36);
  b.set(t);
  new DataView(b.buffer).setUint32(32, v);
  return b;
};
const outs = (n: number) => Array.from({ length: n }, (_, i) => ({ value: 546n, script: Uint8Array.of(0x51, 0x20, i) }));

test('token: init, transfer with change, balances, double spend, readonly', () => {
  const host = new MemHost();
  const T = host.deploy(id(1), compileFile('examples/token.svc'));
  const issuerTx = tx(1);
  let r = call(host, T, 'init', [u128(1_000_000n), u64(0)], ctx({ txid: issuerTx, outputs: outs(1) }));
  assert.equal(r.status, 'executed', serialize(r));
  r = call(host, T, 'balance_at', [key(issuerTx), u64(0)]);
  assert.deepEqual(r.status === 'executed' && r.result, u128(1_000_000n));
  // second init fails
  r = call(host, T, 'init', [u128(5n), u64(0)], ctx({ txid: tx(9), outputs: outs(1) }));
  assert.equal(r.status, 'failed');
  assert.equal(r.status === 'failed' && r.code, 'revert');
  // transfer 300k to vout 0, change to vout 1
  const t2 = tx(2);
  r = call(host, T, 'transfer', [u64(0), u128(300_000n), u64(1)], ctx({ txid: t2, inputs: [{ txid: issuerTx, vout: 0 }], outputs: outs(2) }));
  assert.equal(r.status, 'executed', serialize(r));
  assert.deepEqual(r.status === 'executed' && r.result, u128(1_000_000n));
  assert.equal(r.status === 'executed' && r.events.map((e) => e.name).join(','), 'Debit,Credit,Credit');
  const bal = (t: Uint8Array, v: number): bigint => {
    const x = call(host, T, 'balance_of', [bytes(op(t, v))]);
    assert.equal(x.status, 'executed');
    return x.status === 'executed' ? (x.result!.value as bigint) : -1n;
  };
  assert.equal(bal(issuerTx, 0), 0n);
  assert.equal(bal(t2, 0), 300_000n);
  assert.equal(bal(t2, 1), 700_000n);
  // spending an outpoint that holds nothing fails
  r = call(host, T, 'transfer', [u64(0), u128(1n), u64(0)], ctx({ txid: tx(3), inputs: [{ txid: issuerTx, vout: 0 }], outputs: outs(1) }));
  assert.equal(r.status === 'failed' && r.message, 'no tokens on the spent outpoints');
  // overspend fails and applies nothing
  r = call(host, T, 'transfer', [u64(0), u128(300_001n), u64(0)], ctx({ txid: tx(4), inputs: [{ txid: t2, vout: 0 }], outputs: outs(1) }));
  assert.equal(r.status === 'failed' && r.message, 'insufficient balance');
  assert.equal(bal(t2, 0), 300_000n);
  // merge two outpoints into one
  r = call(host, T, 'transfer', [u64(0), u128(1_000_000n), u64(0)], ctx({ txid: tx(5), inputs: [{ txid: t2, vout: 1 }, { txid: fromHex('77'.repeat(32)), vout: 3 }, { txid: t2, vout: 0 }], outputs: outs(1) }));
  assert.equal(r.status, 'executed', serialize(r));
  assert.equal(bal(tx(5), 0), 1_000_000n);
  r = call(host, T, 'supply', []);
  assert.deepEqual(r.status === 'executed' && r.result, u128(1_000_000n));
});
