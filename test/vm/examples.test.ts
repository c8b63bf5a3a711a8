/** Example contracts played through realistic scenarios in the VM. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ExecResult } from '@svc-node/protocol/vm/types';
import { MemHost, bool, bytes, call, compileFile, ctx, fromHex, hex, id, key, serialize, str, u128, u64 } from '../helpers/vm.js';

const ok = (r: ExecResult): ExecResult => {
  assert.equal(r.status, 'executed', serialize(r));
  return r;
};
const fails = (r: ExecResult, message: RegExp | string, code = 'revert'): void => {
  assert.equal(r.status, 'failed', serialize(r));
  if (r.status === 'failed') {
    assert.equal(r.code, code);
    if (typeof message === 'string') assert.equal(r.message, message);
    else assert.match(r.message, message);
  }
};
const res = (r: ExecResult): unknown => (r.status === 'executed' ? r.result?.value : undefined);
const k = (n: number): Uint8Array => fromHex(n.toString(16).padStart(2, '0').repeat(32));
const tx = (n: number): Uint8Array => fromHex(('e' + n.toString(16)).padStart(4, '0').repeat(16));
const script = (n: number): Uint8Array => Uint8Array.of(0x51, 0x20, ...k(n));

test('nft: mint, approve, transfer, ownership rules', () => {
  const host = new MemHost();
  const N = host.deploy(id(2), compileFile('examples/nft.svc'));
  const alice = k(0xa1), bob = k(0xb0), carol = k(0xc0);
  ok(call(host, N, 'init', [str('Punks')], ctx({ caller: alice })));
  fails(call(host, N, 'mint', [key(bob), str('ipfs://1')], ctx({ caller: bob })), 'only the issuer can mint');
  assert.equal(res(ok(call(host, N, 'mint', [key(bob), str('ipfs://1')], ctx({ caller: alice })))), 1n);
  assert.equal(res(ok(call(host, N, 'mint', [key(carol), str('ipfs://2')], ctx({ caller: alice })))), 2n);
  assert.equal(hex(res(ok(call(host, N, 'owner_of', [u64(1)]))) as Uint8Array), hex(bob));
  assert.equal(res(ok(call(host, N, 'token_uri', [u64(2)]))), 'ipfs://2');
  fails(call(host, N, 'transfer', [u64(1), key(carol)], ctx({ caller: carol })), 'not the owner or approved operator');
  const r = ok(call(host, N, 'transfer', [u64(1), key(carol)], ctx({ caller: bob })));
  assert.equal(r.status === 'executed' && r.events[0]!.name, 'Transfer');
  assert.equal(hex(res(ok(call(host, N, 'owner_of', [u64(1)]))) as Uint8Array), hex(carol));
  ok(call(host, N, 'approve', [u64(1), key(bob)], ctx({ caller: carol })));
  ok(call(host, N, 'transfer', [u64(1), key(alice)], ctx({ caller: bob })));
  fails(call(host, N, 'transfer', [u64(1), key(bob)], ctx({ caller: bob })), 'not the owner or approved operator'); // approval cleared
  fails(call(host, N, 'transfer', [u64(9), key(bob)], ctx({ caller: bob })), 'no such token');
  assert.equal(res(ok(call(host, N, 'total_minted', []))), 2n);
});

test('market: list an NFT, buy it with utxo tokens through nested calls, cancel', () => {
  const host = new MemHost();
  const T = host.deploy(id(1), compileFile('examples/token.svc'));
  const N = host.deploy(id(2), compileFile('examples/nft.svc'));
  const M = host.deploy(id(3), compileFile('examples/market.svc'));
  const issuer = k(0x11), seller = k(0x22), buyer = k(0x33);
  const outs = (...scripts: Uint8Array[]) => scripts.map((s) => ({ value: 546n, script: s }));
  // tokens: 1000 minted to the buyer's output 0 of tx(1)
  ok(call(host, T, 'init', [u128(1000), u64(0)], ctx({ caller: buyer, txid: tx(1), outputs: outs(script(0x33)) })));
  ok(call(host, N, 'init', [str('Art')], ctx({ caller: issuer })));
  ok(call(host, N, 'mint', [key(seller), str('ipfs://art/1')], ctx({ caller: issuer })));
  ok(call(host, M, 'init', [key(T), key(N)]));
  // listing without approval fails inside the NFT frame, nothing applies
  const before = JSON.stringify([...host.store.entries()].map(([c, m]) => [c, [...m.entries()].map(([a, b]) => [a, hex(b)])]));
  fails(call(host, M, 'list', [u64(1), u128(400), bytes(script(0x22))], ctx({ caller: seller })), 'not the owner or approved operator');
  assert.equal(JSON.stringify([...host.store.entries()].map(([c, m]) => [c, [...m.entries()].map(([a, b]) => [a, hex(b)])])), before);
  ok(call(host, N, 'approve', [u64(1), key(M)], ctx({ caller: seller })));
  fails(call(host, M, 'list', [u64(1), u128(400), bytes(script(0x22))], ctx({ caller: buyer })), 'only the owner can list');
  assert.equal(res(ok(call(host, M, 'list', [u64(1), u128(400), bytes(script(0x22))], ctx({ caller: seller })))), 1n);
  assert.equal(hex(res(ok(call(host, N, 'owner_of', [u64(1)]))) as Uint8Array), hex(M), 'escrowed');
  // buy: payment output must pay the seller's script
  const buyCtx = (outputs: { value: bigint; script: Uint8Array }[]) => ctx({ caller: buyer, txid: tx(2), inputs: [{ txid: tx(1), vout: 0 }], outputs });
  fails(call(host, M, 'buy', [u64(1), u64(0), u64(1)], buyCtx(outs(script(0x99), script(0x33)))), 'payment output does not pay the seller');
  const r = ok(call(host, M, 'buy', [u64(1), u64(0), u64(1)], buyCtx(outs(script(0x22), script(0x33)))));
  assert.deepEqual(r.status === 'executed' && r.events.map((e) => `${hex(e.contractId).slice(-2)}:${e.name}`), ['01:Debit', '01:Credit', '01:Credit', '02:Transfer', '03:Sold']);
  assert.equal(hex(res(ok(call(host, N, 'owner_of', [u64(1)]))) as Uint8Array), hex(buyer));
  assert.equal(res(ok(call(host, T, 'balance_at', [key(tx(2)), u64(0)]))), 400n);
  assert.equal(res(ok(call(host, T, 'balance_at', [key(tx(2)), u64(1)]))), 600n);
  assert.equal(res(ok(call(host, M, 'is_open', [u64(1)]))), false);
  fails(call(host, M, 'buy', [u64(1), u64(0), u64(1)], buyCtx(outs(script(0x22), script(0x33)))), 'listing is not open');
  // second sale, underfunded: the token frame reverts and the whole call is undone
  ok(call(host, N, 'approve', [u64(1), key(M)], ctx({ caller: buyer })));
  ok(call(host, M, 'list', [u64(1), u128(700), bytes(script(0x33))], ctx({ caller: buyer })));
  fails(call(host, M, 'buy', [u64(2), u64(0), u64(0)], ctx({ caller: seller, txid: tx(3), inputs: [{ txid: tx(2), vout: 0 }], outputs: outs(script(0x33)) })), 'insufficient balance');
  assert.equal(res(ok(call(host, T, 'balance_at', [key(tx(2)), u64(0)]))), 400n);
  fails(call(host, M, 'cancel', [u64(2)], ctx({ caller: seller })), 'only the seller can cancel');
  ok(call(host, M, 'cancel', [u64(2)], ctx({ caller: buyer })));
  assert.equal(hex(res(ok(call(host, N, 'owner_of', [u64(1)]))) as Uint8Array), hex(buyer));
});

test('swap: liquidity, swaps with fee and slippage guard, constant product never decreases', () => {
  const host = new MemHost();
  const S = host.deploy(id(4), compileFile('examples/swap.svc'));
  const lp = k(0x01), trader = k(0x02);
  const E18 = 10n ** 8n; // 8 decimals
  ok(call(host, S, 'init', [u128(10n ** 30n), u128(10n ** 30n)], ctx({ caller: lp })));
  ok(call(host, S, 'send', [bool(true), key(trader), u128(1000n * E18)], ctx({ caller: lp })));
  const shares = res(ok(call(host, S, 'add_liquidity', [u128(1_000_000n * E18), u128(4_000_000n * E18)], ctx({ caller: lp })))) as bigint;
  assert.equal(shares, 2_000_000n * E18, 'sqrt(a*b) for the first deposit');
  let kPrev = res(ok(call(host, S, 'reserves', []))) as bigint;
  const quote = res(ok(call(host, S, 'quote', [u128(100n * E18), u128(1_000_000n * E18), u128(4_000_000n * E18)]))) as bigint;
  const expect = (100n * E18 * 997n * 4_000_000n * E18) / (1_000_000n * E18 * 1000n + 100n * E18 * 997n);
  assert.equal(quote, expect);
  fails(call(host, S, 'swap', [bool(true), u128(100n * E18), u128(quote + 1n)], ctx({ caller: trader })), 'slippage: output below minimum');
  assert.equal(res(ok(call(host, S, 'swap', [bool(true), u128(100n * E18), u128(quote)], ctx({ caller: trader })))), quote);
  assert.equal(res(ok(call(host, S, 'balance_b', [key(trader)]))), quote);
  for (let i = 0; i < 5; i++) {
    ok(call(host, S, 'swap', [bool(i % 2 === 1), u128(10n * E18), u128(0)], ctx({ caller: trader })));
    const kNow = res(ok(call(host, S, 'reserves', []))) as bigint;
    assert.ok(kNow >= kPrev, 'k never decreases');
    kPrev = kNow;
  }
  fails(call(host, S, 'swap', [bool(true), u128(2000n * E18), u128(0)], ctx({ caller: trader })), 'insufficient A');
  // a product beyond u128 fails with arithmetic_overflow and applies nothing
  fails(call(host, S, 'quote', [u128(10n ** 36n), u128(1), u128(10n ** 10n)]), /overflow/, 'arithmetic_overflow');
  ok(call(host, S, 'remove_liquidity', [u128(shares / 2n)], ctx({ caller: lp })));
  assert.equal(res(ok(call(host, S, 'shares_of', [key(lp)]))), shares - shares / 2n);
  fails(call(host, S, 'remove_liquidity', [u128(shares)], ctx({ caller: lp })), 'not enough shares');
});
