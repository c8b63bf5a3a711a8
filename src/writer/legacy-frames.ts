/**
 * The pipe format between the legacy store dump (legacy-dump.ts, a child process) and
 * the migration (migrate-store.ts): per entry, in key order, `u32 key length | u32 value
 * length | key | value`, then `TRAILER | u64 entry count`; all big-endian.
 */
export const FRAME_HEAD = 8;
/** A key length no entry has (keys are far shorter): marks the trailer. */
export const TRAILER = 0xffffffff;
export const TRAILER_BYTES = 12;
