/**
 * The core process: hosts the writer thread (sole owner of RocksDB), the verification/VM
 * worker pool, and the RPC socket the REST front and gossip process call.
 */
import { Worker } from 'node:worker_threads';
import { RpcClient, RpcServer, portTransport, type Handlers } from '../ipc/rpc.js';
import { WorkPool } from '../pool/pool.js';
import { logger } from '../log.js';
import { secretsOf } from '../config/options.js';
import type { CoreApi, NodeStatus, WriterApi, WriterInit } from '../messages.js';
import type { InitMessage } from '../supervisor/child.js';

const log = logger('core');

export class Core {
  private server: RpcServer<CoreApi> | null = null;
  private readonly startedAt = Date.now();

  private constructor(
    private readonly init: InitMessage,
    private readonly writerThread: Worker,
    readonly writer: RpcClient<WriterApi>,
    readonly pool: WorkPool,
  ) {}

  static async start(init: InitMessage): Promise<Core> {
    const { config } = init;
    const workerData: WriterInit = { dbPath: config.dbPath, nodeId: config.nodeId, logFilter: config.logFilter, secrets: secretsOf(config) };
    const thread = new Worker(new URL('../writer/thread.js', import.meta.url), { workerData });
    const transport = portTransport(thread);
    const writer = new RpcClient<WriterApi>(transport);
    await new Promise<void>((resolve, reject) => {
      writer.on('ready', () => resolve());
      thread.once('error', reject);
      thread.once('exit', (code) => reject(new Error(`writer thread exited with code ${code} before it was ready`)));
    });
    thread.on('error', (e) => {
      log.error('writer thread failed; the core restarts', { error: e });
      process.exit(1);
    });
    const pool = new WorkPool({ threads: config.workers.poolSize, queueLimit: config.workers.queueLimit });
    const core = new Core(init, thread, writer, pool);
    core.server = new RpcServer<CoreApi>(core.handlers(), (e, method) => log.error('core bug', { method, error: e }));
    await core.server.listen(init.ipcPath);
    return core;
  }

  private handlers(): Handlers<CoreApi> {
    return {
      ping: async () => {
        await this.writer.call('status', {});
        return { ok: true as const };
      },
      nodeStatus: () => this.nodeStatus(),
    };
  }

  async nodeStatus(): Promise<NodeStatus> {
    const w = await this.writer.call('status', {});
    const pool = this.pool.stats();
    return {
      node_id: this.init.config.nodeId,
      version: this.init.version,
      tip_height: null,
      processed_height: w.processedHeight,
      state_root: w.stateRoot,
      halted: w.halted,
      halt_reason: w.haltReason,
      peers: 0,
      pending_calls: w.pendingCalls,
      contracts: w.contracts,
      gossip_public_key: this.init.identity.publicKeyHex,
      caught_up: false,
      pool: { threads: pool.threads, queued: pool.queued, queue_limit: pool.queue_limit, saturated: pool.saturated },
      chain: { endpoint_ok: false, last_error: null },
      last_block_processed_at: null,
      uptime_s: Math.floor((Date.now() - this.startedAt) / 1000),
    };
  }

  async stop(): Promise<void> {
    await this.server?.close();
    await this.pool.close();
    const exited = new Promise<void>((resolve) => this.writerThread.once('exit', () => resolve()));
    await this.writer.call('close', {}, 8000);
    await exited;
    log.info('core stopped');
  }
}
