/**
 * Header runs under the test networks' rules (packages/protocol/src/headers.ts,
 * verifyHeaderRun; Bitcoin Core's GetNextWorkRequired with fPowAllowMinDifficultyBlocks
 * and BIP94), played with real recorded mainnet headers placed at the heights each case
 * names (a header does not carry its height: the caller says where the run starts):
 * - inside a period, a header more than twice the target spacing (1,200 s) after its
 *   parent must carry the powLimit's bits; any other carries its period's bits (those of
 *   the period's first header, when held: the run's own, start.period_first, or the
 *   header below the run when that one is a period's first);
 * - at a period boundary, without the previous period's first header, only the
 *   powLimit bounds the bits; with it, the retarget is exact; BIP94 (testnet4) refuses a
 *   boundary header more than 600 s older than its parent, never a later one;
 * - bits exactly at a network's powLimit (regtest's 0x207fffff, every devnet block) meet it.
 * Header pairs used: mainnet 0..10 (bits 0x1d00ffff, the powLimit's, gaps 79 to 815 s
 * but 463,160 s after genesis), 556,415-556,416 (1,507 s apart, bits 0x17371ef4 then
 * 0x173218a5) and 562,463-562,464 (329 s apart, bits 0x17306835 then 0x172e6f88).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../../test/helpers/paths.js';
import { DevnetChain } from '../../src/devnet/chain.js';
import { hex, type CaseInput } from './kit.js';

const MAINNET = '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f';
const TESTNET3 = '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943';
const TESTNET4 = '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043';
const REGTEST = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';

// Mainnet 556,415 and 556,416; 562,463 and 562,464 (as in headers.ts's retarget boundaries).
export const A_LAST = '00000020bc7d388bea14dab9caa937b909caecd6ece36e3c6589200000000000000000007c0900cf1a9b40411141859b98bf95fb9d414f49044e08acff21fa54506022a4e6492a5cf41e3717d2864679';
export const A_NEXT = '00000020120b3264562d49df59c400a0f276448db2a9aa4bf6f4080000000000000000005cb4b52150fe7dec217b74db424e442ef8b24105c244ebaeb59f638db9c48ef3c94f2a5ca5183217b412a530';
const B_LAST = '00000020a46d4a919e723eee2c269a3ad7a1f48184670e33e0580d000000000000000000d0df74c5c0ca4ee2c0f0a93e173d5ea68788413febe3d572f573bf2ef2a906673457605c35683017deaa6854';
const B_NEXT = '00000020ae55d7640b738e1c16091cc73666526e7fa12af66c0419000000000000000000f7825fe0714275fe54521f66e898cf743ed43dd93f185cb628df995823e4ee2d7d58605c886f2e176d085a4c';

/** An 80-byte header that only says a period's first time and bits (what a period-first header is read for): genesis's bytes with those two changed. */
export function periodFirstWith(genesis: string, timestamp: number, bits: number): string {
  const b = Buffer.from(genesis, 'hex');
  b.writeUInt32LE(timestamp, 68);
  b.writeUInt32LE(bits, 72);
  return b.toString('hex');
}

export function headerNetworkCases(): CaseInput[] {
  const m = (JSON.parse(readFileSync(join(fixturesDir, 'esplora', 'headers', 'mainnet-0-10.json'), 'utf8')) as { header: string }[]).map((h) => h.header);
  const c = (id: string, genesis: string, height: number, prev: string | null, periodFirst: string | null, run: string[], pins: string): CaseInput => ({
    id, pins, input: { genesis_hash: genesis, start: { height, prev, period_first: periodFirst }, run },
  });
  const chain = new DevnetChain();
  chain.mine(3);
  const headerAt = (h: number) => hex(chain.blockAt(h)!.raw.subarray(0, 80));
  return [
    c('testnet3-late-header-min-bits', TESTNET3, 1, m[0]!, null, m.slice(1), 'testnet3: a header 463,160 s after its parent carries the powLimit\'s bits, as it must; the headers after it, within 1,200 s, carry their period\'s'),
    c('testnet3-late-header-not-min-bits', TESTNET3, 556420, A_LAST, null, [A_NEXT], 'testnet3: inside a period, a header 1,507 s (more than twice the spacing) after its parent must carry the powLimit\'s bits: refused'),
    c('testnet3-in-period-period-bits', TESTNET3, 562470, B_LAST, B_NEXT, [B_NEXT], 'testnet3: inside a period, a header within 1,200 s of its parent carries its period\'s bits (the period-first header\'s), not its parent\'s'),
    c('testnet3-in-period-other-bits', TESTNET3, 562470, B_LAST, B_LAST, [B_NEXT], 'testnet3: inside a period, a header within 1,200 s of its parent whose bits are not its period\'s is refused'),
    c('testnet3-in-period-period-unknown', TESTNET3, 562470, B_LAST, null, [B_NEXT], 'testnet3: a header inside a period whose first header is not held is checked for its proof of work only'),
    c('testnet3-prev-is-period-first', TESTNET3, 562465, B_LAST, B_NEXT, [B_NEXT], 'testnet3: the header below the run, at a period\'s first height, is that period\'s first: its bits count, not start.period_first\'s; refused'),
    c('testnet3-run-starts-period', TESTNET3, 2016, null, null, [B_LAST, B_NEXT], 'testnet3: a run starting at a period\'s first height makes its first header the period\'s first: the next one, 329 s later with other bits, is refused'),
    c('testnet3-run-starts-mid-period', TESTNET3, 2017, null, null, [B_LAST, B_NEXT], 'testnet3: the same run one height later: its period\'s first header is not held, so the bits are not compared'),
    c('testnet3-period-first-without-prev', TESTNET3, 2017, null, periodFirstWith(m[0]!, 0, 0x1c00ffff), [m[2]!, m[3]!], 'testnet3: start.period_first counts for a run with no header below it; the second header, 429 s after the first, must carry its bits: refused'),
    c('testnet3-boundary-first-unknown', TESTNET3, 556416, A_LAST, null, [A_NEXT], 'testnet3: at a period boundary without the previous period\'s first header only the powLimit bounds the bits'),
    c('testnet3-boundary-starts-period', TESTNET3, 2016, m[1]!, periodFirstWith(m[0]!, 0, 0x1c00ffff), [m[2]!, m[3]!], 'testnet3: the retarget at a boundary after a period more than four times too slow is the powLimit\'s bits, and the boundary header is then its period\'s first: the next header carries its bits, not the previous period\'s'),
    c('testnet4-boundary-after-parent', TESTNET4, 2016, m[1]!, null, [m[2]!], 'testnet4 (BIP94): a boundary header 79 s after its parent is within the timewarp bound (only one more than 600 s before its parent is refused)'),
    c('testnet4-boundary-first-unknown', TESTNET4, 556416, A_LAST, null, [A_NEXT], 'testnet4: a boundary header 1,507 s after its parent, the previous period\'s first not held: accepted'),
    c('mainnet-boundary-at-pow-limit', MAINNET, 2016, m[1]!, null, [m[2]!], 'mainnet: a boundary header at the powLimit\'s bits after a parent at them, the previous period\'s first not held: within the 4x clamps (each clamped to the powLimit)'),
    c('regtest-bits-at-pow-limit', REGTEST, 1, headerAt(0), null, [1, 2, 3].map(headerAt), 'regtest: headers whose bits (0x207fffff) decode to exactly the powLimit meet it'),
  ];
}
