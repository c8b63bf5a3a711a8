/**
 * The networks a node knows by their genesis hash (packages/protocol/src/activation.ts, docs/STATE.md
 * "Where history starts"): each one's activation height and proof-of-work rules, and the
 * retarget rules that differ between them, on each side of their bounds.
 */
import type { CaseInput } from './kit.js';

const GENESIS: [string, string][] = [
  ['bitcoin', '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f'],
  ['testnet3', '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943'],
  ['testnet4', '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043'],
  ['signet', '00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6'],
  ['regtest', '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206'],
];
const genesisOf = (name: string): string => GENESIS.find(([n]) => n === name)![1];

export function networkCases(): CaseInput[] {
  return [
    ...GENESIS.map(([name, hash]) => ({ id: name, pins: `${name}'s activation height (the first block whose stamps count) and proof-of-work rules`, input: { genesis_hash: hash } })),
    { id: 'unlisted', pins: 'a chain whose genesis no network names counts from block 1 under regtest\'s rules', input: { genesis_hash: '11'.repeat(32) } },
  ];
}

const TWO_WEEKS = 14 * 24 * 60 * 60;

/** Retargets whose answer depends on the network: the powLimit clamp of each, and BIP94's first-bits rule. */
export function networkNextWorkCases(): CaseInput[] {
  const c = (id: string, network: string, t0: number, t1: number, firstBits: number, lastBits: number, pins: string): CaseInput => ({
    id, pins, input: { genesis_hash: genesisOf(network), first: { timestamp: t0, bits: firstBits }, last: { timestamp: t1, bits: lastBits } },
  });
  return [
    c('testnet4-bip94-first-bits-harder-first', 'testnet4', 0, TWO_WEEKS, 0x1c00ffff, 0x1d00ffff, 'testnet4 (BIP94) retargets from the period\'s first block\'s bits, not its last block\'s'),
    c('testnet3-last-bits', 'testnet3', 0, TWO_WEEKS, 0x1c00ffff, 0x1d00ffff, 'testnet3 retargets from the period\'s last block\'s bits (a min-difficulty block there is not special)'),
    c('signet-clamped-to-pow-limit', 'signet', 0, 4 * TWO_WEEKS, 0x1e0377ae, 0x1e0377ae, 'signet: a slow period from its powLimit stays at its powLimit (0x1e0377ae)'),
    c('signet-slower-below-limit', 'signet', 0, 2 * TWO_WEEKS, 0x1e01bbd7, 0x1e01bbd7, 'signet: a period twice as slow doubles the target, below its powLimit'),
    c('mainnet-span-quarter-edge', 'bitcoin', 0, TWO_WEEKS / 4, 0x1c00ffff, 0x1c00ffff, 'a period of exactly a quarter of two weeks divides the target by 4'),
    c('mainnet-span-under-quarter', 'bitcoin', 0, TWO_WEEKS / 4 - 1, 0x1c00ffff, 0x1c00ffff, 'a period under a quarter of two weeks counts as a quarter'),
    c('mainnet-span-four-times-edge', 'bitcoin', 0, 4 * TWO_WEEKS, 0x1b00ffff, 0x1b00ffff, 'a period of exactly four times two weeks multiplies the target by 4'),
    c('mainnet-span-over-four-times', 'bitcoin', 0, 4 * TWO_WEEKS + 1, 0x1b00ffff, 0x1b00ffff, 'a period over four times two weeks counts as four times'),
  ];
}
