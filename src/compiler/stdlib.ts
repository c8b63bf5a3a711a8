/**
 * Standard library interfaces. A contract declaring `implements NAME` must provide every
 * function (same parameter types, return type and readonly marker), event (same parameter
 * types) and field (same key and value types) listed here. Names carry a version suffix.
 */
import type { ValueType } from '@svc-node/protocol/value';

export interface InterfaceDef {
  name: string;
  functions: { name: string; params: ValueType[]; ret: ValueType | null; readonly: boolean }[];
  events: { name: string; params: ValueType[] }[];
  fields: { name: string; key: ValueType | null; value: ValueType }[];
}

/** utxo_token_v1: fungible token whose balances are bound to Bitcoin outpoints (docs/LANGUAGE.md). */
export const utxo_token_v1: InterfaceDef = {
  name: 'utxo_token_v1',
  functions: [
    { name: 'init', params: ['u128', 'u64'], ret: null, readonly: false },
    { name: 'transfer', params: ['u64', 'u128', 'u64'], ret: 'u128', readonly: false },
    { name: 'balance_of', params: ['bytes'], ret: 'u128', readonly: true },
    { name: 'balance_at', params: ['key', 'u64'], ret: 'u128', readonly: true },
    { name: 'supply', params: [], ret: 'u128', readonly: true },
  ],
  events: [
    { name: 'Debit', params: ['bytes', 'u128'] },
    { name: 'Credit', params: ['bytes', 'u128'] },
  ],
  fields: [
    { name: 'balances', key: 'bytes', value: 'u128' },
    { name: 'total_supply', key: null, value: 'u128' },
    { name: 'issuer', key: null, value: 'key' },
  ],
};

export const INTERFACES: ReadonlyMap<string, InterfaceDef> = new Map([[utxo_token_v1.name, utxo_token_v1]]);
