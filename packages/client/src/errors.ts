/**
 * Client-side failures of the SDK and the CLI. Node answers keep the node's stable code
 * (PROTOCOL.md section 6, e.g. `anchor_mismatch`) and HTTP status; the SDK's own failures
 * use the codes below. Messages are one line and never contain key material.
 */
import type { CallBody } from './node.js';

export type ClientErrorCode =
  | 'bad_argument' // a typed argument, flag or file the user gave is wrong
  | 'bad_key' // a wallet or caller key cannot be read
  | 'unknown_function' // the ABI has no such function
  | 'insufficient_funds' // the wallet's UTXOs cannot pay outputs + fee
  | 'unreachable' // an endpoint did not answer (connection refused, DNS, timeout)
  | 'chain_error' // the chain-data endpoint answered with an error
  | 'node_error' // the node answered with an error without a JSON error body
  | 'timeout' // polling gave up
  | 'compile_error' // svc test: the contract does not compile
  | 'fee_too_high' // the anchor's fee rate or fee is above the sanity bound (fees.ts)
  | 'chain_unavailable' // a wait gave up: the node's chain-data endpoint keeps failing
  | 'bad_proof' // a node's proof (field answer, call status) does not hold
  | 'internal';

export class ClientError extends Error {
  readonly code: string;
  /** HTTP status when the error is an endpoint's answer. */
  readonly status: number | undefined;
  /** Set when the failure came after the anchoring transaction was broadcast (its fee is spent). */
  readonly txid: string | undefined;
  /** A call's POST /contract_call body, when its broadcast's outcome is unclear (the node holds it; posting it again pays nothing). */
  submission: CallBody | undefined;
  /** The answer's Retry-After in milliseconds (a 429 or 503), when it had one. */
  retryAfterMs: number | undefined;
  constructor(code: ClientErrorCode | string, message: string, status?: number, txid?: string) {
    super(message);
    this.name = 'ClientError';
    this.code = code;
    this.status = status;
    this.txid = txid;
  }
}
