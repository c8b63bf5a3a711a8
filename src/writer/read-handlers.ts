/** Writer handlers of WriterReadApi (src/writer/queries.ts); state versions go out as `state` events. */
import { parentPort } from 'node:worker_threads';
import { eventFrame, type Handlers } from '../ipc/rpc.js';
import type { WriterEvents, WriterReadApi } from '../messages/writer.js';
import type { Writer } from './writer.js';
import { WriterQueries } from './queries.js';
import { StreamQueries } from './stream-queries.js';

export function writerReadHandlers(writer: Writer): Handlers<WriterReadApi> {
  // Posted on the same port as the RPC answers, so the core sees a new state version
  // before any answer computed on that state.
  const q = new WriterQueries(writer, (v) => parentPort?.postMessage(eventFrame<WriterEvents>()('state', v)));
  const stream = new StreamQueries(writer);
  return {
    contractIds: () => q.contractIds(),
    readField: (p) => q.readField(p),
    events: (p) => q.events(p),
    calls: (p) => q.calls(p),
    simSnapshot: (p) => q.simSnapshot(p),
    stateVersion: () => q.stateVersion(),
    readMetrics: () => q.readMetrics(),
    streamStep: (p) => stream.streamStep(p),
  };
}
