/**
 * Headers: Bitcoin Core's compact-target arithmetic (its arith_uint256 vectors), the
 * retarget (its pow_tests vectors and real mainnet boundaries), and runs of real mainnet
 * headers accepted or refused at the right header. Networks are named by their genesis
 * hash (packages/protocol/src/activation.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../../test/helpers/paths.js';
import type { Area, CaseInput } from './kit.js';

const MAINNET = '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f';
const REGTEST = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';

function compactCases(): CaseInput[] {
  const bits = [0x00000000, 0x00123456, 0x01003456, 0x02000056, 0x03000000, 0x04000000, 0x00923456, 0x01803456, 0x02800056, 0x03800000, 0x04800000,
    0x01123456, 0x02123456, 0x03123456, 0x04123456, 0x04923456, 0x05009234, 0x20123456, 0xff123456, 0x1d00ffff, 0x207fffff, 0x1d01ffff, 0x22000001, 0x23000001, 0x21000100, 0x22000100];
  return bits.map((b) => {
    const hex = b.toString(16).padStart(8, '0');
    return { id: `bits-${hex}`, pins: `SetCompact(0x${hex}): target, sign and overflow as arith_uint256; GetCompact of the target`, input: { bits: b } };
  });
}

function nextWorkCases(): CaseInput[] {
  // Bitcoin Core's pow_tests: [first block's time, last block's time, last bits]
  const rows: [string, number, number, number, string][] = [
    ['core-2015', 1231006505, 1233061996, 0x1d00ffff, 'a period slower than two weeks, capped at powLimit (mainnet 0..2015)'],
    ['core-32255', 1261130161, 1262152739, 0x1d00ffff, 'a faster period raises the difficulty (mainnet 30240..32255)'],
    ['core-68543', 1279008237, 1279297671, 0x1c05a3f4, 'a period faster than a quarter is clamped at a quarter of the timespan (mainnet 66528..68543)'],
    ['core-46367', 1263163443, 1269211443, 0x1c387f6f, 'a period slower than four times is clamped at four times (mainnet ..46367)'],
    ['exact-timespan', 1_600_000_000, 1_600_000_000 + 1_209_600, 0x17034219, 'a period of exactly two weeks keeps the target'],
  ];
  return [
    ...rows.map(([id, t0, t1, bits, pins]) => ({ id, pins, input: { genesis_hash: MAINNET, first: { timestamp: t0, bits: 0 }, last: { timestamp: t1, bits } } })),
    ...clampAndNetworkCases(),
  ];
}

const TESTNET3 = '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943';
const TESTNET4 = '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043';
const SIGNET = '00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6';

/** The clamps at their edges and one second past, a period whose last block is older than its first, and the test networks' choice of bits. */
function clampAndNetworkCases(): CaseInput[] {
  const TWO_WEEKS = 1_209_600;
  const T0 = 1_600_000_000;
  const BITS = 0x17034219;
  const c = (id: string, genesis: string, span: number, firstBits: number, lastBits: number, pins: string): CaseInput => ({
    id, pins, input: { genesis_hash: genesis, first: { timestamp: T0, bits: firstBits }, last: { timestamp: T0 + span, bits: lastBits } },
  });
  return [
    c('clamp-4x-exact', MAINNET, 4 * TWO_WEEKS, 0, BITS, 'a period of exactly four times the timespan: the target times four, unclamped'),
    c('clamp-4x-past', MAINNET, 4 * TWO_WEEKS + 1, 0, BITS, 'one second past four times: clamped, the same bits as clamp-4x-exact'),
    c('clamp-quarter-exact', MAINNET, TWO_WEEKS / 4, 0, BITS, 'a period of exactly a quarter of the timespan: the target over four, unclamped'),
    c('clamp-quarter-past', MAINNET, TWO_WEEKS / 4 - 1, 0, BITS, 'one second short of a quarter: clamped, the same bits as clamp-quarter-exact'),
    c('span-negative', MAINNET, -7_200, 0, BITS, 'a last block timestamped before the first (timestamps need not rise): clamped at a quarter'),
    c('testnet3-last-min-difficulty', TESTNET3, TWO_WEEKS, 0x1a0fffff, 0x1d00ffff, 'testnet3 retargets from the last block\'s bits, even a minimum-difficulty block\'s (the testnet3 reset)'),
    c('testnet4-bip94-first-bits', TESTNET4, TWO_WEEKS, 0x1a0fffff, 0x1d00ffff, 'testnet4 (BIP94) retargets from the period\'s first block\'s bits, not a minimum-difficulty last block\'s'),
    c('signet-pow-limit', SIGNET, 4 * TWO_WEEKS, 0, 0x1e0377ae, 'signet: a slow period at its powLimit stays at its powLimit (0x1e0377ae)'),
  ];
}

/** Real mainnet retarget boundaries: the first and last header of a period, and the next period's first. */
const BOUNDARIES: { height: number; first: string; last: string; next: string }[] = [
  {
    height: 556416,
    first: '00004020d3b2d7d61ad2d95ffbd556d9e00f07877423600a8da015000000000000000000d192743a2c190a7421f92fefe92505579d7b8eda568cacee13b25751ac704c669d83195cf41e371721bae3e7',
    last: '00000020bc7d388bea14dab9caa937b909caecd6ece36e3c6589200000000000000000007c0900cf1a9b40411141859b98bf95fb9d414f49044e08acff21fa54506022a4e6492a5cf41e3717d2864679',
    next: '00000020120b3264562d49df59c400a0f276448db2a9aa4bf6f4080000000000000000005cb4b52150fe7dec217b74db424e442ef8b24105c244ebaeb59f638db9c48ef3c94f2a5ca5183217b412a530',
  },
  {
    height: 562464,
    first: '000000206b05bd2c4a06b3d8503a033c2593396a25a79e1dcadb140000000000000000001b08df3d42cd9a38d8b66adf9dc5eb464f503633bd861085ffff723634531596a1a24e5c35683017bf67b72a',
    last: '00000020a46d4a919e723eee2c269a3ad7a1f48184670e33e0580d000000000000000000d0df74c5c0ca4ee2c0f0a93e173d5ea68788413febe3d572f573bf2ef2a906673457605c35683017deaa6854',
    next: '00000020ae55d7640b738e1c16091cc73666526e7fa12af66c0419000000000000000000f7825fe0714275fe54521f66e898cf743ed43dd93f185cb628df995823e4ee2d7d58605c886f2e176d085a4c',
  },
];

function runCases(): CaseInput[] {
  const mainnet0to10 = (JSON.parse(readFileSync(join(fixturesDir, 'esplora', 'headers', 'mainnet-0-10.json'), 'utf8')) as { header: string }[]).map((h) => h.header);
  const text = (name: string) => readFileSync(join(fixturesDir, 'esplora', 'bodies', 'block', `${name}.header.txt`), 'utf8').trim();
  const h729999 = text('00000000000000000008b6f6fb83f8d74512ef1e0af29e642dd20daddd7d318f');
  const h730000 = text('0000000000000000000384f28cb3b9cf4377a39cfd6c29ae9466951de38c0529');
  const c = (id: string, height: number, prev: string | null, periodFirst: string | null, run: string[], pins: string, genesis = MAINNET): CaseInput => ({
    id, pins, input: { genesis_hash: genesis, start: { height, prev, period_first: periodFirst }, run },
  });
  const flipped = (pos: number) => {
    const b = Buffer.from(mainnet0to10[7]!, 'hex');
    b[pos]! ^= 1;
    return [...mainnet0to10.slice(0, 7), b.toString('hex'), ...mainnet0to10.slice(8)];
  };
  const cases: CaseInput[] = [
    c('mainnet-0-10', 0, null, null, mainnet0to10, 'mainnet headers 0 to 10 link and meet their proof of work'),
    c('mainnet-729999-730000', 729999, null, null, [h729999, h730000], 'two recorded mainnet headers with nothing below them held'),
    c('skipped-header', 0, null, null, [...mainnet0to10.slice(0, 5), ...mainnet0to10.slice(6)], 'a header left out breaks the link at the next one'),
    c('flipped-nonce', 0, null, null, flipped(77), 'a changed nonce byte fails the proof of work at that header'),
    c('flipped-prev-hash', 0, null, null, flipped(5), 'a changed previous-hash byte breaks the link at that header'),
    c('flipped-bits', 0, null, null, flipped(72), 'changed bits fail at that header'),
    c('unlinked-start', 3, mainnet0to10[0]!, null, mainnet0to10.slice(3), 'a run that does not follow the header below it is refused at its first header'),
    c('regtest-rules-on-mainnet-header', 0, null, null, mainnet0to10.slice(0, 2), 'regtest (and any unlisted chain) checks linkage and proof of work only', REGTEST),
  ];
  for (const b of BOUNDARIES) {
    cases.push(
      c(`boundary-${b.height}-exact`, b.height, b.last, b.first, [b.next], `mainnet retarget at ${b.height}: with the period's first header the bits are exactly the retarget's`),
      c(`boundary-${b.height}-clamped`, b.height, b.last, null, [b.next], `mainnet retarget at ${b.height}: without the period's first header the bits are within the 4x clamps`),
      c(`boundary-${b.height}-off-by-one`, b.height + 1, b.last, null, [b.next], `the header of ${b.height} placed one height later is inside a period, where the bits may not change`),
      c(`boundary-${b.height}-wrong-first`, b.height, b.last, b.last, [b.next], `a wrong period-first header gives another retarget, refused`),
      c(`boundary-${b.height}-crossing-run`, b.height - 1, null, b.first, [b.last, b.next], `a run crossing the retarget at ${b.height} (the period's last header, then the next period's first): the retarget checked inside the run`),
      c(`boundary-${b.height}-crossing-run-wrong-first`, b.height - 1, null, b.last, [b.last, b.next], `a run crossing the retarget at ${b.height} with a wrong period-first header: refused at the next period's first`),
      c(`boundary-${b.height}-crossing-run-clamped`, b.height - 1, null, null, [b.last, b.next], `a run crossing the retarget at ${b.height} without the period's first header: within the 4x clamps`),
      c(`boundary-${b.height}-crossing-run-shifted`, b.height - 2, null, null, [b.last, b.next], `the same run one height lower: the bits change inside a period, refused at its second header`),
    );
  }
  return cases;
}

export function headersArea(): Area {
  return { 'headers.compact': compactCases(), 'headers.next-work': nextWorkCases(), 'headers.run': runCases() };
}
