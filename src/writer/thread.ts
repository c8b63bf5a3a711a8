/** Writer thread entry: opens RocksDB and serves WriterApi on the parent port. */
import { parentPort, workerData } from 'node:worker_threads';
import { Writer } from './writer.js';
import { portTransport, serveTransport } from '../ipc/rpc.js';
import { configureLogging, logger, registerSecret } from '../log.js';
import type { WriterApi, WriterInit } from '../messages.js';

const init = workerData as WriterInit;
configureLogging({ filter: init.logFilter, process: 'core' });
for (const s of init.secrets) registerSecret(s);
const log = logger('writer');

const writer = await Writer.open(init.dbPath, init.nodeId, log);
const transport = portTransport(parentPort!);
serveTransport<WriterApi>(
  transport,
  {
    status: () => writer.status(),
    close: async () => {
      await writer.close();
      setImmediate(() => process.exit(0));
      return { closed: true as const };
    },
  },
  (e, method) => log.error('writer bug', { method, error: e }),
);
parentPort!.postMessage({ k: 'evt', n: 'ready', d: null });
