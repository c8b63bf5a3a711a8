/**
 * Protocol activation per network: the first block whose stamps count. Every node of a
 * network anchors its block journal just below it unless the operator overrides
 * `start_height`, so a node started with no data and default settings scans the same
 * history as its peers and reaches the same state root at every height
 * (docs/STATE.md, "Where history starts").
 *
 * A network is told by its genesis block hash (`/block-height/0` at the chain-data
 * endpoint), which cannot be spoofed by the endpoint without serving another chain.
 * Heights of public networks are fixed here per protocol release, never below a height
 * whose stamps an earlier release counted: a stamp below them is not part of the
 * protocol's history on any node. A chain whose genesis is not listed (a private chain,
 * the devnet) counts from block 1.
 */

/**
 * Proof-of-work rules of a network (Bitcoin Core's Consensus::Params), what a header
 * chain is checked against (packages/protocol/src/headers.ts, verifyHeaderRun).
 */
export interface PowParams {
  /** The easiest target allowed (consensus.powLimit), a 256-bit number. */
  powLimit: bigint;
  /** Blocks per retarget period (2016); null: the network never retargets (regtest). */
  retargetInterval: number | null;
  /** The period's intended duration in seconds (two weeks). */
  targetTimespan: number;
  /** The intended seconds between blocks (600). */
  targetSpacing: number;
  /**
   * Test networks: a block more than twice targetSpacing after its parent may (and then
   * must) carry the powLimit's bits; the others carry their period's bits.
   */
  allowMinDifficulty: boolean;
  /** BIP94 (testnet4): the retarget starts from the period's first bits, and its first block may not be more than 600 s older than its parent. */
  enforceBIP94: boolean;
}

const TWO_WEEKS = 14 * 24 * 60 * 60;
const MAINNET_POW_LIMIT = (1n << 224n) - 1n; // 00000000ffff...ff
const STANDARD: Omit<PowParams, 'powLimit'> = { retargetInterval: 2016, targetTimespan: TWO_WEEKS, targetSpacing: 600, allowMinDifficulty: false, enforceBIP94: false };

/**
 * Regtest's rules: powLimit 0x207fffff and no retarget, so bits are checked only against
 * powLimit. Also what an unlisted chain (a private chain) is held to.
 */
export const REGTEST_POW: PowParams = { ...STANDARD, powLimit: 0x7fffffn << 232n, retargetInterval: null };

export interface NetworkParams {
  network: string;
  /** The first block whose stamps count. */
  height: number;
  pow: PowParams;
}

/** Genesis block hash (display hex) -> network name, activation height and proof-of-work rules. */
export const ACTIVATIONS: ReadonlyMap<string, NetworkParams> = new Map([
  // Heights at or above each network's tip when this protocol release was fixed, so no
  // stamp of it predates them. A node with no peer walks the header chain from its
  // activation at ten headers per endpoint request (Esplora's /blocks/:height), so the
  // height must be where the protocol really starts (docs/STATE.md, "Where history starts").
  ['000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f', { network: 'bitcoin', height: 977_000, pow: { ...STANDARD, powLimit: MAINNET_POW_LIMIT } }],
  [
    '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943',
    { network: 'testnet3', height: 2_500_000, pow: { ...STANDARD, powLimit: MAINNET_POW_LIMIT, allowMinDifficulty: true } },
  ],
  [
    '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043',
    { network: 'testnet4', height: 50_000, pow: { ...STANDARD, powLimit: MAINNET_POW_LIMIT, allowMinDifficulty: true, enforceBIP94: true } },
  ],
  // Signet's blocks are signed by its operators; its proof of work is checked all the same.
  ['00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6', { network: 'signet', height: 200_000, pow: { ...STANDARD, powLimit: 0x0377aen << 216n } }],
  ['0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206', { network: 'regtest', height: 1, pow: REGTEST_POW }],
]);

/** The network with this genesis hash; an unlisted chain counts from block 1 under regtest's rules. */
export function networkParams(genesisHash: string): NetworkParams {
  return ACTIVATIONS.get(genesisHash) ?? { network: 'unlisted', height: 1, pow: REGTEST_POW };
}

/** The first block whose stamps count on the network with this genesis (1 for unlisted chains). */
export function activationHeight(genesisHash: string): number {
  return networkParams(genesisHash).height;
}

/**
 * Where a node with no data anchors its journal: the block below activation, or the
 * operator's `start_height` (whose stamps then start at start_height + 1).
 */
export function journalAnchorHeight(genesisHash: string, startHeight: number | null): number {
  return startHeight ?? activationHeight(genesisHash) - 1;
}
