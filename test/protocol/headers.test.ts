/**
 * Header chains (packages/protocol/src/headers.ts): Bitcoin Core's compact-target arithmetic, the
 * retarget on real mainnet boundaries, and runs of headers (real mainnet, devnet
 * regtest, and short-period chains mined here to reach every rule) accepted or refused
 * at the right header.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkProofOfWork,
  decodeCompact,
  encodeCompact,
  hashMeetsTarget,
  headerHash,
  nextWorkRequired,
  parseHeader80,
  verifyHeaderRun,
  type Header80,
} from '@svc-node/protocol/headers';
import { ACTIVATIONS, REGTEST_POW, networkParams, type PowParams } from '@svc-node/protocol/activation';
import { DevnetChain, REGTEST_GENESIS_HASH } from '../../src/devnet/chain.js';
import { esploraDir, fixtureText } from '../helpers/chain-servers.js';

const MAINNET = networkParams('000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f').pow;
const h80 = (hex: string): Header80 => parseHeader80(Buffer.from(hex, 'hex'));
const mainnet0to10: Header80[] = (JSON.parse(readFileSync(join(esploraDir, 'headers', 'mainnet-0-10.json'), 'utf8')) as { header: string }[]).map((h) => h80(h.header));

test("compact targets decode and encode as Bitcoin Core's arith_uint256 (its test vectors)", () => {
  const rows: [number, string, number | null, boolean, boolean][] = [
    // bits, target hex, GetCompact, negative, overflow
    [0x00000000, '0', 0, false, false],
    [0x00123456, '0', 0, false, false],
    [0x01003456, '0', 0, false, false],
    [0x02000056, '0', 0, false, false],
    [0x03000000, '0', 0, false, false],
    [0x04000000, '0', 0, false, false],
    [0x00923456, '0', 0, false, false],
    [0x01803456, '0', 0, false, false],
    [0x02800056, '0', 0, false, false],
    [0x03800000, '0', 0, false, false],
    [0x04800000, '0', 0, false, false],
    [0x01123456, '12', 0x01120000, false, false],
    [0x02123456, '1234', 0x02123400, false, false],
    [0x03123456, '123456', 0x03123456, false, false],
    [0x04123456, '12345600', 0x04123456, false, false],
    [0x04923456, '12345600', null, true, false],
    [0x05009234, '92340000', 0x05009234, false, false],
    [0x20123456, '1234560000000000000000000000000000000000000000000000000000000000', 0x20123456, false, false],
    [0xff123456, '', null, false, true],
  ];
  for (const [bits, target, compact, negative, overflow] of rows) {
    const d = decodeCompact(bits);
    assert.equal(d.negative, negative, `negative of ${bits.toString(16)}`);
    assert.equal(d.overflow, overflow, `overflow of ${bits.toString(16)}`);
    if (target !== '') assert.equal(d.target.toString(16), target, `target of ${bits.toString(16)}`);
    if (compact !== null) assert.equal(encodeCompact(d.target), compact, `compact of ${bits.toString(16)}`);
  }
  assert.equal(encodeCompact(0x80n), 0x02008000);
  assert.equal(encodeCompact(MAINNET.powLimit), 0x1d00ffff);
  assert.equal(encodeCompact(REGTEST_POW.powLimit), 0x207fffff);
});

test('proof of work: the bits must decode to a positive target within the network minimum, and the hash must meet it', () => {
  const genesis = mainnet0to10[0]!;
  assert.equal(checkProofOfWork(genesis.hash, genesis.bits, MAINNET.powLimit), true);
  assert.match(checkProofOfWork(genesis.hash, 0x1b00ffff, MAINNET.powLimit) as string, /above the target/);
  assert.match(checkProofOfWork(genesis.hash, 0x1d01ffff, MAINNET.powLimit) as string, /less work than the network's minimum/);
  assert.match(checkProofOfWork('00'.repeat(32), 0x04923456, MAINNET.powLimit) as string, /positive target/);
  assert.match(checkProofOfWork('00'.repeat(32), 0xff123456, MAINNET.powLimit) as string, /positive target/);
  assert.match(checkProofOfWork('00'.repeat(32), 0x03000000, MAINNET.powLimit) as string, /positive target/);
  assert.equal(hashMeetsTarget(genesis.hash, genesis.bits), true);
  assert.equal(hashMeetsTarget('ff'.repeat(32), 0x207fffff), false);
});

test("the retarget is Bitcoin Core's CalculateNextWorkRequired (its pow_tests vectors: mainnet blocks 2015, 32255, 68543, 46367)", () => {
  // [first block's time, last block's time, last bits, expected]
  const rows: [number, number, number, number][] = [
    [1231006505, 1233061996, 0x1d00ffff, 0x1d00ffff], // 0 .. 2015: slower than two weeks, capped at powLimit
    [1261130161, 1262152739, 0x1d00ffff, 0x1d00d86a], // 30240 .. 32255
    [1279008237, 1279297671, 0x1c05a3f4, 0x1c0168fd], // 66528 .. 68543: clamped at a quarter
    [1263163443, 1269211443, 0x1c387f6f, 0x1d00e1fd], // .. 46367: clamped at four times
  ];
  for (const [t0, t1, bits, want] of rows) {
    assert.equal(nextWorkRequired({ timestamp: t0, bits: 0 }, { timestamp: t1, bits }, MAINNET), want);
  }
});

/** Real mainnet retarget boundaries (first and last header of a period, the next period's first). */
const BOUNDARIES: { height: number; first: string; last: string; next: string }[] = [
  {
    height: 556416,
    first: '00004020d3b2d7d61ad2d95ffbd556d9e00f07877423600a8da015000000000000000000d192743a2c190a7421f92fefe92505579d7b8eda568cacee13b25751ac704c669d83195cf41e371721bae3e7',
    last: '00000020bc7d388bea14dab9caa937b909caecd6ece36e3c6589200000000000000000007c0900cf1a9b40411141859b98bf95fb9d414f49044e08acff21fa54506022a4e6492a5cf41e3717d2864679',
    next: '00000020120b3264562d49df59c400a0f276448db2a9aa4bf6f4080000000000000000005cb4b52150fe7dec217b74db424e442ef8b24105c244ebaeb59f638db9c48ef3c94f2a5ca5183217b412a530',
  },
  {
    height: 558432,
    first: '00000020120b3264562d49df59c400a0f276448db2a9aa4bf6f4080000000000000000005cb4b52150fe7dec217b74db424e442ef8b24105c244ebaeb59f638db9c48ef3c94f2a5ca5183217b412a530',
    last: '0000402022c9973a4f6c0623105f2a5d0dc349773848a4f02de60f000000000000000000e88eabc4c6398c80cea87f6d1d662c6640de4719f7949ae85afe75746dd04abbabef3b5ca5183217f6d45f41',
    next: '00c0ff2f6550b5dae76559589e3e3e135237072b6bc498949da6280000000000000000005988783435f506d2ccfbadb484e56d6f1d5dfdd480650acae1e3b43d3464ea73caf13b5c33d62f171d508fdb',
  },
  {
    height: 562464,
    first: '000000206b05bd2c4a06b3d8503a033c2593396a25a79e1dcadb140000000000000000001b08df3d42cd9a38d8b66adf9dc5eb464f503633bd861085ffff723634531596a1a24e5c35683017bf67b72a',
    last: '00000020a46d4a919e723eee2c269a3ad7a1f48184670e33e0580d000000000000000000d0df74c5c0ca4ee2c0f0a93e173d5ea68788413febe3d572f573bf2ef2a906673457605c35683017deaa6854',
    next: '00000020ae55d7640b738e1c16091cc73666526e7fa12af66c0419000000000000000000f7825fe0714275fe54521f66e898cf743ed43dd93f185cb628df995823e4ee2d7d58605c886f2e176d085a4c',
  },
];

test('real mainnet retarget boundaries (556,416, 558,432, 562,464): exact with the period\'s first header, within the clamps without it', () => {
  for (const b of BOUNDARIES) {
    const [first, last, next] = [h80(b.first), h80(b.last), h80(b.next)];
    assert.equal(next.prevHash, last.hash);
    assert.notEqual(next.bits, last.bits, 'the difficulty changed here');
    assert.equal(nextWorkRequired(first, last, MAINNET), next.bits, `retarget at ${b.height}`);
    assert.deepEqual(verifyHeaderRun({ height: b.height, prev: last, periodFirst: first }, [next], MAINNET), { ok: true });
    assert.deepEqual(verifyHeaderRun({ height: b.height, prev: last }, [next], MAINNET), { ok: true });
    // The same header placed one height off is inside a period: its bits may not change there.
    const off = verifyHeaderRun({ height: b.height + 1, prev: last }, [next], MAINNET);
    assert.ok(!off.ok && /change within a retarget period/.test(off.reason));
    // The period's first header given wrongly (the last one's place) gives another retarget.
    const wrong = verifyHeaderRun({ height: b.height, prev: last, periodFirst: last }, [next], MAINNET);
    assert.ok(!wrong.ok && /not the retarget's/.test(wrong.reason));
  }
});

test('mainnet headers 0 to 10 and the recorded 729,999 -> 730,000 verify; a broken link or a changed byte is refused at its header', () => {
  assert.deepEqual(verifyHeaderRun({ height: 0, prev: null }, mainnet0to10, MAINNET), { ok: true });
  const h729999 = h80(fixtureText('bodies/block/00000000000000000008b6f6fb83f8d74512ef1e0af29e642dd20daddd7d318f.header.txt').trim());
  const h730000 = h80(fixtureText('bodies/block/0000000000000000000384f28cb3b9cf4377a39cfd6c29ae9466951de38c0529.header.txt').trim());
  assert.deepEqual(verifyHeaderRun({ height: 729999, prev: null }, [h729999, h730000], MAINNET), { ok: true });
  assert.equal(headerHash(Buffer.from(h730000.hex, 'hex')), '0000000000000000000384f28cb3b9cf4377a39cfd6c29ae9466951de38c0529');

  const skipped = [...mainnet0to10.slice(0, 5), ...mainnet0to10.slice(6)];
  const r = verifyHeaderRun({ height: 0, prev: null }, skipped, MAINNET);
  assert.ok(!r.ok && r.index === 5 && /previous hash/.test(r.reason));
  // Any byte of header 7 changed: its proof of work fails (or, in the previous-hash bytes, its link).
  for (let pos = 0; pos < 80; pos += 7) {
    const b = Buffer.from(mainnet0to10[7]!.hex, 'hex');
    b[pos]! ^= 0x01;
    const run = mainnet0to10.slice(0, 7).concat(parseHeader80(b), mainnet0to10.slice(8));
    const bad = verifyHeaderRun({ height: 0, prev: null }, run, MAINNET);
    assert.ok(!bad.ok && bad.index === 7, `byte ${pos}`);
  }
  // Linked to a header the run does not follow.
  const unlinked = verifyHeaderRun({ height: 3, prev: mainnet0to10[0]! }, mainnet0to10.slice(3), MAINNET);
  assert.ok(!unlinked.ok && unlinked.index === 0);
});

test('the devnet (regtest) chain verifies by linkage and proof of work alone; its genesis names regtest', () => {
  const chain = new DevnetChain();
  chain.mine(30);
  const run = Array.from({ length: 31 }, (_, h) => chain.blockAt(h)!.header);
  const regtest = networkParams(REGTEST_GENESIS_HASH);
  assert.equal(regtest.network, 'regtest');
  assert.equal(regtest.pow, REGTEST_POW);
  assert.deepEqual(verifyHeaderRun({ height: 0, prev: null }, run, regtest.pow), { ok: true });
  assert.deepEqual(verifyHeaderRun({ height: 11, prev: run[10]! }, run.slice(11), regtest.pow), { ok: true });
  const r = verifyHeaderRun({ height: 0, prev: null }, [...run.slice(0, 12), ...run.slice(13)], regtest.pow);
  assert.ok(!r.ok && r.index === 12);
  // An unlisted chain is held to regtest's rules.
  assert.equal(networkParams('11'.repeat(32)).pow, REGTEST_POW);
});

// ------------------------------------------------------------------ rules reached with mined short periods

/** Mines one header (nonce ground until it meets its own bits under `limit`). */
function mine(prev: Header80 | null, timestamp: number, bits: number, tag: number, limit: bigint): Header80 {
  const b = Buffer.alloc(80);
  b.writeUInt32LE(0x20000000, 0);
  if (prev) Buffer.from(prev.hash, 'hex').reverse().copy(b, 4);
  b.writeUInt32LE(tag, 36);
  b.writeUInt32LE(timestamp, 68);
  b.writeUInt32LE(bits, 72);
  for (let nonce = 0; ; nonce++) {
    b.writeUInt32LE(nonce, 76);
    const h = parseHeader80(b);
    if (checkProofOfWork(h.hash, bits, limit) === true) return h;
  }
}

/**
 * Four-block periods of 1-s spacing under a limit of 0x1f7fffff (about 2^247): products
 * of a target and a timespan stay within 256 bits (regtest's own limit would wrap, which
 * is why regtest never retargets), and a header takes a few hundred nonces to mine.
 */
const SHORT: PowParams = { ...REGTEST_POW, powLimit: 0x7fffffn << 224n, retargetInterval: 4, targetTimespan: 4, targetSpacing: 1 };

/** A run from genesis under `params`, with the rules' bits unless `bitsAt` says otherwise; `timeAt` per height. */
function chainOf(params: PowParams, n: number, timeAt: (h: number) => number, bitsAt: (h: number, rule: number) => number = (_h, r) => r): Header80[] {
  const out: Header80[] = [];
  const minBits = encodeCompact(params.powLimit);
  for (let h = 0; h < n; h++) {
    const prev = out[h - 1] ?? null;
    const i = params.retargetInterval!;
    let rule: number;
    if (h === 0) rule = minBits;
    else if (h % i === 0) rule = nextWorkRequired(out[h - i]!, prev!, params);
    else if (params.allowMinDifficulty && timeAt(h) > prev!.timestamp + 2 * params.targetSpacing) rule = minBits;
    else rule = params.allowMinDifficulty ? out[h - (h % i)]!.bits : prev!.bits;
    out.push(mine(prev, timeAt(h), bitsAt(h, rule), h, params.powLimit));
  }
  return out;
}

test('short periods: each retarget is exact; bits changed inside a period or off the retarget are refused at that header', () => {
  // Blocks in the same second: each retarget quarters the target (the clamp).
  const fast = (_h: number) => 1_600_000_000;
  const good = chainOf(SHORT, 13, fast);
  assert.deepEqual([good[3]!.bits, good[4]!.bits, good[8]!.bits].map((b) => b.toString(16)), ['1f7fffff', '1f1fffff', '1f07ffff']);
  assert.deepEqual(verifyHeaderRun({ height: 0, prev: null }, good, SHORT), { ok: true });
  // Started mid-chain with the period's first header held: still exact.
  assert.deepEqual(verifyHeaderRun({ height: 6, prev: good[5]!, periodFirst: good[4]! }, good.slice(6), SHORT), { ok: true });

  const inside = chainOf(SHORT, 8, fast, (h, r) => (h === 6 ? 0x1f1ffffe : r));
  const a = verifyHeaderRun({ height: 0, prev: null }, inside, SHORT);
  assert.ok(!a.ok && a.index === 6 && /change within a retarget period/.test(a.reason));

  const offRetarget = chainOf(SHORT, 6, fast, (h, r) => (h === 4 ? 0x1f2fffff : r));
  const b = verifyHeaderRun({ height: 0, prev: null }, offRetarget, SHORT);
  assert.ok(!b.ok && b.index === 4 && /not the retarget's 0x1f1fffff/.test(b.reason));

  // Without the period's first header, a boundary is held to the 4x clamps: a quarter passes, an eighth does not.
  assert.deepEqual(verifyHeaderRun({ height: 4, prev: good[3]! }, good.slice(4, 6), SHORT), { ok: true });
  const steep = chainOf(SHORT, 6, fast, (h, r) => (h === 4 ? 0x1f0fffff : r));
  const c = verifyHeaderRun({ height: 4, prev: steep[3]! }, steep.slice(4), SHORT);
  assert.ok(!c.ok && c.index === 0 && /more than four times/.test(c.reason));

  // Bits easier than the network's minimum are refused whatever the work.
  const tooEasy = [good[0]!, mine(good[0]!, fast(1), 0x2100ffff, 1, 1n << 256n)];
  const d = verifyHeaderRun({ height: 0, prev: null }, tooEasy, SHORT);
  assert.ok(!d.ok && d.index === 1 && /minimum/.test(d.reason));
});

test('test networks: a block more than twice the spacing after its parent carries (only) the minimum difficulty; the others their period\'s bits', () => {
  const TEST: PowParams = { ...SHORT, allowMinDifficulty: true };
  // Block 6 comes 25 minutes after block 5 (more than twice the 1-s spacing).
  const timeAt = (h: number) => 1_600_000_000 + (h >= 6 ? 1500 : 0);
  const good = chainOf(TEST, 8, timeAt);
  assert.equal(good[6]!.bits, 0x1f7fffff);
  assert.equal(good[7]!.bits, good[4]!.bits);
  assert.deepEqual(verifyHeaderRun({ height: 0, prev: null }, good, TEST), { ok: true });

  const gapWithPeriodBits = chainOf(TEST, 7, timeAt, (h, r) => (h === 6 ? good[4]!.bits : r));
  const a = verifyHeaderRun({ height: 0, prev: null }, gapWithPeriodBits, TEST);
  assert.ok(!a.ok && a.index === 6 && /minimum difficulty/.test(a.reason));

  const minWithoutGap = chainOf(TEST, 6, timeAt, (h, r) => (h === 5 ? 0x1f7fffff : r));
  const b = verifyHeaderRun({ height: 0, prev: null }, minWithoutGap, TEST);
  assert.ok(!b.ok && b.index === 5 && /not its period's/.test(b.reason));

  // BIP94 (testnet4): a period's first block more than 600 s older than its parent is refused.
  const BIP94: PowParams = { ...TEST, enforceBIP94: true };
  const warped = chainOf(BIP94, 5, (h) => 1_600_000_000 - (h === 4 ? 1000 : 0));
  const w = verifyHeaderRun({ height: 0, prev: null }, warped, BIP94);
  assert.ok(!w.ok && w.index === 4 && /BIP94/.test(w.reason));
});

test('every listed network has its proof-of-work rules; mainnet activates at 977,000', () => {
  assert.equal(networkParams('000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f').height, 977_000);
  for (const [genesis, n] of ACTIVATIONS) {
    assert.ok(n.pow.powLimit > 0n, genesis);
    assert.equal(encodeCompact(n.pow.powLimit) >>> 24 <= 0x20, true);
  }
  assert.equal(networkParams('00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043').pow.enforceBIP94, true);
});
