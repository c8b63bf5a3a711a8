/**
 * What the protocol reads of a transaction: its inputs' outpoints (binding, the execution
 * context) and its outputs' scripts and values (stamps, the execution context). A parsed
 * bitcoinjs `Transaction` has this shape, and so do the parts the core parses once per
 * block and hands the writer (TxParts, src/records.ts): checks take either as is.
 */
export interface TxShape {
  /** `hash`: the spent txid in internal (reversed) byte order, as in a raw transaction. */
  ins: { hash: Uint8Array; index: number }[];
  outs: { script: Uint8Array; value: bigint }[];
}
