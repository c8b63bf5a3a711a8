/** The protocol codec (PROTOCOL.md sections 1-3): one import for the node, the SDK and the CLI. */
export * from './hash.js';
export * from './stamp.js';
export * from './value.js';
export * from './schnorr.js';
export * from './envelope.js';
export * from './contract.js';
export * from './binding.js';
export * from './identifiers.js';
export * from './tx-shape.js';
