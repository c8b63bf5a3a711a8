/**
 * The node's one error type. Every failure a client or peer can see carries a stable
 * snake_case `code` (PROTOCOL.md section 6); HTTP and gRPC statuses are mapped from it
 * here and nowhere else. Messages must never contain secrets (api_token,
 * gossip_private_key): build them from public data only.
 */

export const ErrorCode = {
  bad_request: 'bad_request',
  unauthorized: 'unauthorized',
  locked: 'locked',
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
  conflict: 'conflict',
  payload_too_large: 'payload_too_large',
  anchor_not_found: 'anchor_not_found',
  anchor_mismatch: 'anchor_mismatch',
  /** Bitcoin evidence that proves nothing: forged or mismatched (wrong branch, block, transaction or header). */
  bad_evidence: 'bad_evidence',
  /** Coin evidence that shows no coin the sender controls (a prev tx, an output, a script or signature that does not hold). */
  bad_coin: 'bad_coin',
  /** A payload whose anchor is not confirmed came without the coin evidence that pays for its wait. */
  coin_missing: 'coin_missing',
  /** The coin's transaction is neither confirmed in a header the node holds nor an anchor it holds pending (within the ancestor bound). */
  coin_unproven: 'coin_unproven',
  /**
   * The coin's transaction is confirmed at or below the node's journal anchor (start_height,
   * or just below the protocol's activation), where it holds no header: never provable on
   * this node. Spend the coin once into a new one, or send the payload once its anchor confirms.
   */
  coin_before_anchor: 'coin_before_anchor',
  /** The coin already backs a pending payload that pays at least as much (one coin, one waiting payload). */
  coin_in_use: 'coin_in_use',
  bad_signature: 'bad_signature',
  invalid_bytecode: 'invalid_bytecode',
  code_hash_mismatch: 'code_hash_mismatch',
  unknown_contract: 'unknown_contract',
  bad_arguments: 'bad_arguments',
  duplicate_call_id: 'duplicate_call_id',
  halted: 'halted',
  chain_unavailable: 'chain_unavailable',
  overloaded: 'overloaded',
  /** The REST front's request to the core got no answer in time, or the core is restarting. */
  core_unavailable: 'core_unavailable',
  /** GET /ready: some part of the node is not serving (the body says which). */
  not_ready: 'not_ready',
  rate_limited: 'rate_limited',
  internal: 'internal',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const HTTP_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  locked: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  anchor_not_found: 422,
  anchor_mismatch: 422,
  bad_evidence: 422,
  bad_coin: 422,
  coin_missing: 422,
  coin_unproven: 422,
  coin_before_anchor: 422,
  coin_in_use: 422,
  bad_signature: 422,
  invalid_bytecode: 422,
  code_hash_mismatch: 422,
  unknown_contract: 422,
  bad_arguments: 422,
  duplicate_call_id: 422,
  rate_limited: 429,
  internal: 500,
  halted: 503,
  chain_unavailable: 503,
  overloaded: 503,
  core_unavailable: 503,
  not_ready: 503,
};

/** @grpc/grpc-js status numbers (grpc.status), kept numeric so this file has no gRPC import. */
const GRPC_STATUS: Record<ErrorCode, number> = {
  bad_request: 3, // INVALID_ARGUMENT
  unauthorized: 16, // UNAUTHENTICATED
  locked: 7, // PERMISSION_DENIED
  not_found: 5, // NOT_FOUND
  method_not_allowed: 12, // UNIMPLEMENTED
  conflict: 6, // ALREADY_EXISTS
  payload_too_large: 8, // RESOURCE_EXHAUSTED
  anchor_not_found: 9, // FAILED_PRECONDITION
  anchor_mismatch: 9,
  bad_evidence: 3, // INVALID_ARGUMENT: wrong in the request itself, whatever the receiver's state
  bad_coin: 3,
  coin_missing: 9, // FAILED_PRECONDITION: the payload may be taken once its anchor confirms
  coin_unproven: 9,
  coin_before_anchor: 9, // FAILED_PRECONDITION: another node anchored lower may take it, and this one once its anchor confirms
  coin_in_use: 9,
  bad_signature: 3,
  invalid_bytecode: 3,
  code_hash_mismatch: 3,
  unknown_contract: 9,
  bad_arguments: 3,
  duplicate_call_id: 6,
  rate_limited: 8,
  internal: 13, // INTERNAL
  halted: 14, // UNAVAILABLE
  chain_unavailable: 14,
  overloaded: 14,
  core_unavailable: 14,
  not_ready: 14,
};

export class NodeError extends Error {
  readonly code: ErrorCode;
  /** Extra public detail (field name, offset, reason); safe to show to clients. */
  readonly detail: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, detail?: Record<string, unknown>) {
    super(message);
    this.name = 'NodeError';
    this.code = code;
    this.detail = detail;
  }

  get httpStatus(): number {
    return HTTP_STATUS[this.code];
  }

  get grpcStatus(): number {
    return GRPC_STATUS[this.code];
  }

  toJSON(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export function httpStatusOf(code: ErrorCode): number {
  return HTTP_STATUS[code];
}

export function grpcStatusOf(code: ErrorCode): number {
  return GRPC_STATUS[code];
}

export function isErrorCode(x: unknown): x is ErrorCode {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(HTTP_STATUS, x);
}

/** Any thrown value as a NodeError; unknown errors become `internal` without leaking their text. */
export function asNodeError(e: unknown): NodeError {
  if (e instanceof NodeError) return e;
  return new NodeError('internal', 'internal error');
}

/** Plain-object form for crossing threads and processes (structured clone drops class identity). */
export interface WireError {
  code: ErrorCode;
  message: string;
  detail?: Record<string, unknown>;
}

export function toWire(e: unknown): WireError {
  const n = asNodeError(e);
  return n.detail ? { code: n.code, message: n.message, detail: n.detail } : { code: n.code, message: n.message };
}

export function fromWire(w: WireError): NodeError {
  return new NodeError(isErrorCode(w.code) ? w.code : 'internal', w.message, w.detail);
}

/**
 * One line for an operator about a failure that stops a process (startup, a bind, a
 * database that cannot be opened). Errors that are not `Error` instances (RocksDB's
 * open errors are plain objects with a message, and an error thrown in a worker thread
 * arrives in the parent with only what structured clone keeps) are described by their
 * message, never as "[object Object]".
 */
export function describeError(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  if (e !== null && typeof e === 'object') {
    const m = (e as { message?: unknown }).message;
    if (typeof m === 'string' && m.length > 0) return m;
    try {
      const json = JSON.stringify(e);
      if (json && json !== '{}') return json.slice(0, 300);
    } catch {
      /* circular: fall through */
    }
    return `unknown error (${Object.prototype.toString.call(e)})`;
  }
  return String(e);
}
