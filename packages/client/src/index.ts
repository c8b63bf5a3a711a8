/** Client SDK: one import for applications and the svc CLI. */
export * from './errors.js';
export * from './wallet.js';
export * from './anchor.js';
export * from './abi.js';
export * from './http.js';
export * from './esplora.js';
export * from './node.js';
export * from './sdk.js';
export * from './coin.js';
export * from './stream.js';
export * from './submitter.js';
export * from './psbt.js';
export * from './answers.js';
export * from './reader.js';
export * from './cursor-file.js';
export * from './typed-contract.js';
