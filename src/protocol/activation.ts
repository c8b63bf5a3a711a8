/**
 * Protocol activation per network: the first block whose stamps count. Every node of a
 * network anchors its block journal just below it unless the operator overrides
 * `start_height`, so a node started with no data and default settings scans the same
 * history as its peers and reaches the same state root at every height
 * (docs/STATE.md, "Where history starts").
 *
 * A network is told by its genesis block hash (`/block-height/0` at the chain-data
 * endpoint), which cannot be spoofed by the endpoint without serving another chain.
 * Heights of public networks are fixed here once, at deployment, and never moved: a
 * stamp below them is not part of the protocol's history on any node. A chain whose
 * genesis is not listed (a private chain, the devnet, regtest) counts from block 1.
 */

/** Genesis block hash (display hex) -> network name and activation height. */
export const ACTIVATIONS: ReadonlyMap<string, { network: string; height: number }> = new Map([
  // Heights below each network's tip when protocol v1 was fixed, so no stamp of this
  // protocol predates them; a new node scans from there (docs/OPERATING.md: catch-up).
  ['000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f', { network: 'bitcoin', height: 900_000 }],
  ['000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943', { network: 'testnet3', height: 2_500_000 }],
  ['00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043', { network: 'testnet4', height: 50_000 }],
  ['00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6', { network: 'signet', height: 200_000 }],
  ['0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206', { network: 'regtest', height: 1 }],
]);

/** The first block whose stamps count on the network with this genesis (1 for unlisted chains). */
export function activationHeight(genesisHash: string): number {
  return ACTIVATIONS.get(genesisHash)?.height ?? 1;
}

/**
 * Where a node with no data anchors its journal: the block below activation, or the
 * operator's `start_height` (whose stamps then start at start_height + 1).
 */
export function journalAnchorHeight(genesisHash: string, startHeight: number | null): number {
  return startHeight ?? activationHeight(genesisHash) - 1;
}
