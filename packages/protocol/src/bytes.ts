/**
 * Bytes as the protocol shows and compares them: lowercase hex, equality, and Bitcoin's two
 * byte orders (a hash's internal bytes are its display hex reversed, PROTOCOL.md section 1).
 * The one home of each; other modules re-export what they used to define.
 */

/** Lowercase hex of `b` (a view's own bytes, not its whole buffer). */
export function toHex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Display hex of internal-order bytes (reversed): how explorers and Esplora show a Bitcoin hash or txid. */
export function displayHex(internal: Uint8Array): string {
  return Buffer.from(internal).reverse().toString('hex');
}

/** Internal-order bytes of a display-hex hash or txid (a fresh copy). */
export function internalBytes(display: string): Uint8Array {
  return new Uint8Array(Buffer.from(display, 'hex').reverse());
}

/** A reversed copy of `b`: a hash's bytes in the other byte order. */
export function reversed(b: Uint8Array): Uint8Array {
  return Uint8Array.from(b).reverse();
}
