/** The kinds of live-feed subscription (docs/STREAM.md), one class each. */
import { BlocksSubscription } from './blocks.js';
import { ContractCallsSubscription, TxidCallsSubscription } from './calls.js';
import type { Connection } from './connection.js';
import { EventsSubscription } from './events.js';
import type { SubscribeRequest } from './protocol.js';
import type { Kind, Subscription } from './subscription.js';

/**
 * The order in which the kinds deliver each step. It is the order of messages between
 * subscriptions on one connection within a step, so it stays as clients have seen it.
 */
export const KINDS: readonly Kind[] = [EventsSubscription, ContractCallsSubscription, BlocksSubscription, TxidCallsSubscription];

/** The subscription a checked subscribe request asks for. */
export function subscription(conn: Connection, r: SubscribeRequest): Subscription {
  switch (r.kind) {
    case 'events':
      return new EventsSubscription(conn, r);
    case 'blocks':
      return new BlocksSubscription(conn, r);
    case 'calls':
      // protocol.ts lets exactly one of contract_id and txids through.
      return r.contract_id !== null ? new ContractCallsSubscription(conn, r.id, r.contract_id, r.after, r.from_height, r.progress) : new TxidCallsSubscription(conn, r.id, r.txids!);
  }
}
