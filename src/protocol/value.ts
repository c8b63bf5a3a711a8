export type ValueType = 'u64' | 'i64' | 'u128' | 'bool' | 'string' | 'bytes' | 'key';
export type Value =
  | { type: 'u64'; value: bigint } | { type: 'i64'; value: bigint } | { type: 'u128'; value: bigint }
  | { type: 'bool'; value: boolean } | { type: 'string'; value: string }
  | { type: 'bytes'; value: Uint8Array } | { type: 'key'; value: Uint8Array };
