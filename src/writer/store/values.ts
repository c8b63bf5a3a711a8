/**
 * Typed values as stored in event runs (events.ts) and call decisions (call-decisions.ts),
 * binary: the one binary form of a typed value, whose home is packages/protocol/src/value.ts (a
 * block's decision leaves commit to it, packages/protocol/src/state/decisions.ts). Not the contract storage
 * encoding (that is the VM's, packages/protocol/src/vm/storage-layout.ts).
 */
export { readValue, valueBytes, writeValue } from '@svc-node/protocol/value';
