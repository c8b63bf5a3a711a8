/**
 * Field checks at the edges (REST bodies, stream requests, peer messages, chain-data
 * arguments): one function per rule, one wording per rule, each throwing NodeError
 * `bad_request` that names what it checked (noble's `ensureBytes(title, ...)` pattern).
 * `field` is the detail clients read to point at the input; by default the title itself,
 * `null` where the title names no input field (a function's argument).
 */
import { NodeError } from './errors.js';
import { HEX32 } from './identifiers.js';

const detailOf = (title: string, field: string | null | undefined): Record<string, unknown> | undefined => {
  const f = field === undefined ? title : field;
  return f === null ? undefined : { field: f };
};

/** `v` as a 32-byte hash or id in lowercase hex (64 characters). */
export function ensureHex32(title: string, v: unknown, field?: string | null): string {
  if (typeof v !== 'string' || !HEX32.test(v)) throw new NodeError('bad_request', `${title} must be 64 lowercase hex characters`, detailOf(title, field));
  return v;
}

/** `v` as exactly 32 bytes (a hash or id as a peer message carries it). */
export function ensureBytes32(title: string, v: unknown, field?: string | null): Uint8Array {
  if (!(v instanceof Uint8Array) || v.length !== 32) throw new NodeError('bad_request', `${title} must be 32 bytes`, detailOf(title, field));
  return v;
}
