/**
 * The stored buckets, one module each (buckets.ts is the registry of their ids): each
 * owns its keys (builders, ranges, parsers) and its value codec. Imported by name, e.g.
 * `callDecisions.key(txid)`, `stateRoots.decode(v)`.
 */
export { BUCKETS, Bucket, DERIVED_BUCKETS, RETIRED_BUCKET_IDS, STORE_FORMAT, type BucketName } from './buckets.js';
export { bucketOf, bucketRange } from './keys.js';
export * as meta from './meta.js';
export * as contracts from './contracts.js';
export * as storage from './storage.js';
export * as calls from './calls.js';
export * as callBodies from './call-bodies.js';
export * as callDecisions from './call-decisions.js';
export * as pendingCalls from './pending-calls.js';
export * as callIds from './call-ids.js';
export * as events from './events.js';
export * as contractCalls from './contract-calls.js';
export * as callCounts from './call-counts.js';
export * as contractDrops from './contract-drops.js';
export * as journal from './journal.js';
export * as undo from './undo.js';
export * as stateRoots from './state-roots.js';
export * as orphanStamps from './orphan-stamps.js';
export * as payloads from './payloads.js';
export * as headers from './headers.js';
export * as evidence from './evidence.js';
export * as evidenceAt from './evidence-at.js';
export * as blockDecisions from './decisions.js';
export type { Tip } from './meta.js';
export type { StateRootAt } from './state-roots.js';
export type { StoredEventRow } from './events.js';
export type { UndoEntry } from './undo.js';
