/**
 * The textual forms the protocol and the contract language fix, in one place: every
 * check of a 32-byte hex id or of a name imports them from here.
 */

/** 32 bytes as lowercase hex (PROTOCOL section 1): txids, block hashes, contract ids, keys. */
export const HEX32 = /^[0-9a-f]{64}$/;

/** An identifier of the contract language (docs/LANGUAGE.md, section 1): a letter or `_`, then letters, digits and `_`. */
export const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Most characters of a name an artifact declares (a function, parameter, event or field):
 * the bytecode verifier refuses a longer one, so no deployed contract holds one, the
 * compiler refuses to declare one, and the node answers a longer name as malformed.
 */
export const MAX_NAME_CHARS = 64;

/** An identifier of at most MAX_NAME_CHARS characters: a name an artifact can declare. */
export function isName(x: unknown): x is string {
  return typeof x === 'string' && x.length <= MAX_NAME_CHARS && IDENT.test(x);
}
