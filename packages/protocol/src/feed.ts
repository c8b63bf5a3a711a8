/**
 * The live feed's server messages (`GET /v2/stream`, docs/STREAM.md and
 * docs/stream.asyncapi.yaml): one type per message, `FeedMessage` their union, and one
 * builder per message that makes its exact wire text. The node sends only what these
 * builders make; the SDK's reader and the sink read `FeedMessage`. No node dependency
 * (types and JSON only), so a client package can take this module as it is.
 *
 * Key order is part of the wire (clients have seen these bytes): each builder writes its
 * fields in one fixed order.
 */

/** A call's status (GET /contract_call/{txid}/status). */
export type FeedCallStatus = 'pending' | 'executed' | 'failed' | 'invalid' | 'dropped';

/** The fields of GET /contract_call/{txid}/status, as a `call` message carries them. */
export interface FeedCall {
  txid: string;
  contract_id: string;
  envelope_hash: string;
  function: string;
  caller: string;
  call_id: string;
  status: FeedCallStatus;
  block_height: number | null;
  tx_index: number | null;
  result: unknown;
  error: { code: string; message: string } | null;
  confirmations: number | null;
}

/** An event as GET /events lists it, as an `event` message carries it. */
export interface FeedEvent {
  name: string;
  params: Record<string, unknown>;
  txid: string;
  block_height: number;
  tx_index: number;
  log_index: number;
}

export type FeedKind = 'events' | 'blocks' | 'calls';
export type FeedErrorCode = 'bad_request' | 'not_found' | 'overloaded';

export interface SubscribedMessage {
  type: 'subscribed';
  sub: string;
  kind: FeedKind;
}
export type EventMessage = { type: 'event'; sub: string; cursor: string } & FeedEvent;
export interface BlockMessage {
  type: 'block';
  sub: string;
  height: number;
  block_hash: string;
  state_root: string;
}
/** `cursor`: decided calls of a contract subscription (resume after it); none on txid subscriptions and on a rollback's `pending`. */
export type CallMessage = { type: 'call'; sub: string; cursor?: string } & FeedCall;
/** Blocks: the height reached; events and contract calls: with its cursor; txids: the head (null before any block) and the txids the node does not know. */
export type SyncedMessage =
  | { type: 'synced'; sub: string; height: number }
  | { type: 'synced'; sub: string; height: number; cursor: string }
  | { type: 'synced'; sub: string; height: number | null; unknown: string[] };
export interface ProgressMessage {
  type: 'progress';
  sub: string;
  height: number;
}
/** Blocks: the heights retracted; events: the cursors; calls: the txids (then each back to `pending`). `cursor` null: everything retracted. */
export type RollbackMessage =
  | { type: 'rollback'; sub: string; fork_height: number; retracted_heights: [number, number] }
  | { type: 'rollback'; sub: string; fork_height: number; cursor: string | null; retracted: string[]; complete: boolean }
  | { type: 'rollback'; sub: string; fork_height: number; cursor: string | null; txids: string[]; complete: boolean };
export interface UnsubscribedMessage {
  type: 'unsubscribed';
  sub: string;
}
/** `sub` is absent when the message that failed named no subscription (or was not readable). */
export interface ErrorMessage {
  type: 'error';
  sub?: string;
  code: FeedErrorCode;
  message: string;
}

/** Every message the node sends on the live feed. */
export type FeedMessage = SubscribedMessage | EventMessage | BlockMessage | CallMessage | SyncedMessage | ProgressMessage | RollbackMessage | UnsubscribedMessage | ErrorMessage;
export type FeedMessageType = FeedMessage['type'];

// ---------------------------------------------------------------- builders

export function subscribedMessage(sub: string, kind: FeedKind): string {
  const m: SubscribedMessage = { type: 'subscribed', sub, kind };
  return JSON.stringify(m);
}

export function blockMessage(sub: string, b: { height: number; block_hash: string; state_root: string }): string {
  const m: BlockMessage = { type: 'block', sub, height: b.height, block_hash: b.block_hash, state_root: b.state_root };
  return JSON.stringify(m);
}

export function syncedBlocksMessage(sub: string, height: number): string {
  const m: SyncedMessage = { type: 'synced', sub, height };
  return JSON.stringify(m);
}

export function syncedLogMessage(sub: string, height: number, cursor: string): string {
  const m: SyncedMessage = { type: 'synced', sub, height, cursor };
  return JSON.stringify(m);
}

export function syncedTxidsMessage(sub: string, height: number | null, unknown: string[]): string {
  const m: SyncedMessage = { type: 'synced', sub, height, unknown };
  return JSON.stringify(m);
}

export function progressMessage(sub: string, height: number): string {
  const m: ProgressMessage = { type: 'progress', sub, height };
  return JSON.stringify(m);
}

export function rollbackBlocksMessage(sub: string, fork: number, lastRetracted: number): string {
  const m: RollbackMessage = { type: 'rollback', sub, fork_height: fork, retracted_heights: [fork, lastRetracted] };
  return JSON.stringify(m);
}

/** An events (`retracted`: cursors) or calls (`txids`) rollback: everything after `cursor` (null: everything) is retracted. */
export function rollbackLogMessage(sub: string, fork: number, cursor: string | null, field: 'retracted' | 'txids', retracted: string[], complete: boolean): string {
  const m: RollbackMessage = field === 'retracted' ? { type: 'rollback', sub, fork_height: fork, cursor, retracted, complete } : { type: 'rollback', sub, fork_height: fork, cursor, txids: retracted, complete };
  return JSON.stringify(m);
}

export function unsubscribedMessage(sub: string): string {
  const m: UnsubscribedMessage = { type: 'unsubscribed', sub };
  return JSON.stringify(m);
}

export function errorMessage(sub: string | undefined, code: FeedErrorCode, message: string): string {
  const m: ErrorMessage = sub === undefined ? { type: 'error', code, message } : { type: 'error', sub, code, message };
  return JSON.stringify(m);
}

/*
 * `event` and `call` messages are spliced: one event (or call status) read for a thousand
 * subscribers is serialised once (its tail), and each subscription adds its own head
 * (`{"type":...,"sub":...,`, made once per subscription). The splice is done here only;
 * head and tail are branded so a text of one message type cannot be spliced into another.
 */
declare const spliced: unique symbol;
/** `{"type":"event","sub":"...",` (or `call`) of one subscription. */
export type FeedHead<T extends 'event' | 'call'> = string & { readonly [spliced]: ['head', T] };
/** A message's fields after `"sub":...,` through its closing brace. */
export type FeedTail<T extends 'event' | 'call'> = string & { readonly [spliced]: ['tail', T] };

export function feedHead<T extends 'event' | 'call'>(type: T, sub: string): FeedHead<T> {
  return `{"type":"${type}","sub":${JSON.stringify(sub)},` as FeedHead<T>;
}

/** The tail of an `event` message: its cursor, then the event's fields. */
export function eventTail(cursor: string, e: FeedEvent): FeedTail<'event'> {
  return `"cursor":${JSON.stringify(cursor)},${JSON.stringify(e).slice(1)}` as FeedTail<'event'>;
}

/** The tail of a `call` message: its cursor if it has one, then the status fields. */
export function callTail(body: FeedCall, cursor?: string): FeedTail<'call'> {
  const fields = JSON.stringify(body).slice(1);
  return (cursor === undefined ? fields : `"cursor":${JSON.stringify(cursor)},${fields}`) as FeedTail<'call'>;
}

/** An `event` or `call` message from its subscription's head and its shared tail. */
export function splicedMessage<T extends 'event' | 'call'>(head: FeedHead<T>, tail: FeedTail<T>): string {
  return head + tail;
}

export function eventMessage(sub: string, cursor: string, e: FeedEvent): string {
  return splicedMessage(feedHead('event', sub), eventTail(cursor, e));
}

export function callMessage(sub: string, body: FeedCall, cursor?: string): string {
  return splicedMessage(feedHead('call', sub), callTail(body, cursor));
}
