/** Writer thread entry: opens RocksDB and serves WriterApi on the parent port. */
import { parentPort, workerData } from 'node:worker_threads';
import { Writer } from './writer.js';
import { writerReadHandlers } from './read-handlers.js';
import { writerPeerHandlers } from './peer-handlers.js';
import { portTransport, serveTransport } from '../ipc/rpc.js';
import { configureLogging, logger, registerSecret } from '../log.js';
import type { WriterApi, WriterInit } from '../messages.js';
import { describeError } from '@svc-node/protocol/errors';

const init = workerData as WriterInit;
configureLogging({ filter: init.logFilter, process: 'core' });
for (const s of init.secrets) registerSecret(s);
const log = logger('writer');

// RocksDB's open errors are not Error instances: thrown from here as they are, they reach
// the core as an empty object (structured clone keeps only an Error's fields).
const writer = await Writer.open(init.dbPath, init.nodeId, log, { maxPendingCalls: init.maxPendingCalls }).catch((e: unknown) => {
  throw new Error(`cannot open the database at ${init.dbPath}: ${describeError(e)}`);
});
const l = writer.ledger;
const transport = portTransport(parentPort!);
serveTransport<WriterApi>(
  transport,
  {
    ...writerReadHandlers(writer),
    ...writerPeerHandlers(writer),
    status: () => writer.status(),
    initAnchor: (p) => writer.initAnchor(p),
    knownHash: (p) => l.knownHash(p.height),
    payloadAt: (p) => l.payloadAt(p.txid),
    contract: (p) => l.contract(p.id),
    callLookup: async (p) => {
      const lookedUpAt = l.tip ? { height: l.tip.height, epoch: l.chainEpoch } : null;
      return { known: await l.payloadAt(p.txid), contractKnown: l.contract(p.contractId) !== null, lookedUpAt };
    },
    acceptDeploy: (p) => writer.acceptDeploy(p.record, p.evidence, p.folded, p.coin),
    acceptCall: (p) => writer.acceptCall(p.record, p.outpoint, p.evidence, p.folded, p.coin),
    call: (p) => l.call(p.txid),
    applyChainUpdate: (p) => writer.applyChainUpdate(p),
    // The published answer (PROTOCOL section 6): the root's parts are served in proofs.
    stateRoot: async (p) => {
      const r = p.height === null ? (l.tip ? await l.stateRootAt(l.tip.height) : null) : await l.stateRootAt(p.height);
      return r && { height: r.height, block_hash: r.block_hash, state_root: r.state_root };
    },
    clearHalt: () => writer.clearHalt(),
    putHeaders: (p) => writer.putHeaders(p.from, p.headers, p.truncate),
    headers: (p) => l.headers(p.from, p.count),
    payloadEvidence: (p) => writer.payloadEvidence(p.txid),
    callProof: (p) => writer.callProof(p.txid),
    takeEvidence: (p) => writer.takeEvidence(p.txid, p.evidence),
    storeSpentBy: async (p) => {
      await writer.storeSpentBy(p.items);
      return { stored: true as const };
    },
    pendingPayloads: (p) => l.pendingPayloads(p.after, p.limit),
    stillPending: (p) => l.stillPending(p.txids),
    evictPayloads: (p) => writer.evictPayloads(p.txids),
    stop: () => {
      writer.stop();
      return { stopping: true as const };
    },
    close: async () => {
      await writer.close();
      // The answer leaves at the end of this turn (the transport sends a turn's frames
      // together, from an immediate queued after this one): exit one turn later.
      setImmediate(() => setImmediate(() => process.exit(0)));
      return { closed: true as const };
    },
  },
  (e, method) => log.error('writer bug', { method, error: e }),
);
parentPort!.postMessage({ k: 'evt', n: 'ready', d: null });
