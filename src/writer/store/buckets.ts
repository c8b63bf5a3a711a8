/**
 * The stored buckets (docs/ARCHITECTURE.md, "Storage layout"): every RocksDB key starts
 * with one bucket's one-byte id, and each bucket has one module in this folder that owns
 * its keys and its value codec (store/index.ts lists them). Nothing else builds a key or
 * parses a stored value.
 *
 * `derived`: whether everything in the bucket follows from the block journal and the
 * stored payloads. A re-derivation (src/writer/ledger/replay.ts, `rederive`) deletes
 * every derived bucket, keeping only what its rule there names, and replays the journal
 * to build it again; the other buckets are the node's own record of what it received and
 * survive it (the registration and the tip in `contract` and `meta` are reset there).
 */
export const BUCKETS = {
  /** Node id, store layout, journal anchor, processed tip and halt: src/writer/store/meta.ts. */
  meta: { id: 0x01, derived: false },
  /** Deploy registrations, with their activation (reset to pending by a re-derivation). */
  contract: { id: 0x02, derived: false },
  /** Contract storage, one key per entry. */
  storage: { id: 0x03, derived: true },
  /** A call's fields fixed at intake. */
  call: { id: 0x04, derived: false },
  /** Event runs of a contract in a block. */
  event: { id: 0x05, derived: true },
  /** The block journal. */
  block: { id: 0x06, derived: false },
  /** Undo logs of the last JOURNAL_WINDOW blocks. */
  undo: { id: 0x07, derived: true },
  /** The state root after each block (the anchor's is kept by a re-derivation). */
  stateRoot: { id: 0x08, derived: true },
  /** (caller, call_id) pairs taken by executed and failed calls. */
  callIdIndex: { id: 0x09, derived: true },
  /** Stamps confirmed before their payload arrived. */
  orphanStamp: { id: 0x0a, derived: true },
  /** What the node holds under each txid (kind, contract, body hash). */
  payload: { id: 0x0b, derived: false },
  /** Calls of a contract decided in a block. */
  contractCalls: { id: 0x0c, derived: true },
  /** Pending calls, for the start-up load (every call, after a re-derivation's reset). */
  pendingCall: { id: 0x0d, derived: true },
  /** Decided calls per contract. */
  callCount: { id: 0x0e, derived: true },
  /** A call's payload (borsh envelope), stored once at intake. */
  callBody: { id: 0x0f, derived: false },
  /** What a block decided for a call; absent while the call is pending. */
  callDecision: { id: 0x10, derived: true },
  /**
   * Bitcoin block headers (80 bytes) by height from the journal's anchor up, verified
   * (linked, proof of work) before they are stored; may run ahead of the processed tip.
   * Chain data: a re-derivation replays against them, never deletes them.
   */
  header: { id: 0x11, derived: false },
  /** The Bitcoin evidence received with a payload (its anchor, the claims placing it on chain). */
  evidence: { id: 0x12, derived: false },
  /**
   * Claims of evidence by the block they name (height, block hash, txid): how a block
   * read as a header alone finds the payloads it confirms and the calls it drops.
   */
  evidenceAt: { id: 0x13, derived: false },
  /** Calls of a contract a block dropped (no position: beside its call log). */
  contractDrops: { id: 0x14, derived: true },
  /** The decision leaves of each processed block (packages/protocol/src/state/decisions.ts). */
  decisions: { id: 0x15, derived: true },
} as const satisfies Record<string, { id: number; derived: boolean }>;

export type BucketName = keyof typeof BUCKETS;

/** Bucket ids by name. */
export const Bucket = Object.fromEntries(Object.entries(BUCKETS).map(([name, b]) => [name, b.id])) as { readonly [N in BucketName]: (typeof BUCKETS)[N]['id'] };
export type Bucket = (typeof Bucket)[BucketName];

/**
 * Ids once used and no longer: never given to a new bucket, so old data is never misread
 * as new. None has been retired yet; 0x00 has never been used.
 */
export const RETIRED_BUCKET_IDS: readonly number[] = [];

/** The buckets a re-derivation deletes and rebuilds, in id order. */
export const DERIVED_BUCKETS: readonly BucketName[] = (Object.keys(BUCKETS) as BucketName[]).filter((n) => BUCKETS[n].derived).sort((a, b) => BUCKETS[a].id - BUCKETS[b].id);

/**
 * Layout of the stored records (this folder). A data directory written with another
 * layout is refused at startup rather than misread; 2: binary call records; 3: state roots
 * from the Merkle trie (stored roots of format 2 would not replay), events in runs of
 * EVENT_CHUNK per key; 4: a call's decision in its own record (callDecision), event runs,
 * decisions and journal entries binary; 5: block headers, payloads' Bitcoin evidence and
 * merkle branches in journal entries (a format-4 store is taken over in place: load.ts);
 * 6: state roots of version 2 (a block's decisions committed beside the contracts,
 * packages/protocol/src/state/decisions.ts) with their two parts, each block's decision leaves (a format-5
 * store is re-derived from its journal at start: Writer.open); 7: state roots of version 3
 * (the same records, calls decided under this release's execution rules; a format-6 store
 * is re-derived from its journal at start).
 */
export const STORE_FORMAT = 7;
