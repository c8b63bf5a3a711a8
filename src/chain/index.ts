/** Chain data: the Esplora client, the block watcher, and the Bitcoin helpers they share (packages/protocol/src/bitcoin.ts). */
export {
  EsploraClient,
  parseRetryAfter,
  type EsploraClientOptions,
  type EsploraBlock,
  type BlockStatus,
  type TxStatus,
  type Outspend,
  type ChainSource,
} from './esplora-client.js';
export {
  BlockWatcher,
  ReorgTooDeepError,
  connectedBlockOf,
  type BlockWatcherOptions,
  type BlockRef,
  type ChainEvent,
  type ConnectedBlock,
  type ConnectedTx,
  type BlockStamp,
  type RejectedStamp,
} from './watcher.js';
export { parseRawBlock, parseTxHex, parseHeaderBytes, merkleRootOfTxids, type ParsedBlock, type ParsedHeader } from '@svc-node/protocol/bitcoin';
