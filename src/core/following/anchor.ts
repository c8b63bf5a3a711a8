/**
 * Anchoring the block journal of a node with no data: below the network's protocol
 * activation, or at start_height. The genesis hash names the network: where the journal
 * is anchored, and (light following) the proof-of-work rules every header is checked
 * against.
 */
import { journalAnchorHeight, networkParams, type PowParams } from '@svc-node/protocol/activation';
import type { EsploraClient } from '../../chain/esplora-client.js';
import type { RpcClient } from '../../ipc/rpc.js';
import type { WriterApi, WriterStatus } from '../../messages/writer.js';
import { logger } from '../../log.js';
import { TIP, type ChainMode } from './host.js';

const log = logger('chain');

/** Anchoring retries start here and double up to the cap while the endpoint is down. */
const ANCHOR_RETRY_BASE_MS = 500;
const ANCHOR_RETRY_CAP_MS = 30_000;

export interface AnchorSteps {
  mode: ChainMode;
  startHeight: number | null;
  isStopped(): boolean;
  /** The proof-of-work rules known so far, and the ones the genesis hash names once learned. */
  pow(): PowParams | null;
  learnedPow(pow: PowParams): void;
  noteStatus(st: WriterStatus): void;
  /** The last attempt's error, or null once one succeeded. */
  noteError(message: string | null): void;
}

/**
 * Anchors the journal (when `status` shows none) and learns the network's proof-of-work
 * rules (light following), retrying while the endpoint is down, until done or stopped.
 * Answers the writer's status after it.
 */
export async function anchorJournal(chain: EsploraClient, writer: RpcClient<WriterApi>, status: WriterStatus, steps: AnchorSteps): Promise<WriterStatus> {
  let delay = ANCHOR_RETRY_BASE_MS;
  let genesis: string | null = null;
  while ((status.processedHeight === null || (steps.mode === 'light' && steps.pow() === null)) && !steps.isStopped()) {
    try {
      genesis ??= await chain.blockHashAt(0, TIP);
      if (steps.pow() === null) steps.learnedPow(networkParams(genesis).pow);
      if (status.processedHeight !== null) break;
      const height = journalAnchorHeight(genesis, steps.startHeight);
      const hash = await chain.blockHashAt(height, TIP);
      status = await writer.call('initAnchor', { height, hash });
      steps.noteStatus(status);
      steps.noteError(null);
    } catch (e) {
      const error = (e as Error).message;
      steps.noteError(error);
      log.warn('cannot anchor the block journal yet; retrying', { error, retry_ms: delay });
      await new Promise((r) => setTimeout(r, delay).unref());
      delay = Math.min(delay * 2, ANCHOR_RETRY_CAP_MS);
    }
  }
  return status;
}
