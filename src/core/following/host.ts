/**
 * What a following mode (blocks-mode.ts, light-mode.ts) reads of and reports to the
 * follower that started it (follower.ts): the chain tip as the endpoint named it, the
 * writer's statuses, progress lines and failures.
 */
import type { EsploraClient, RequestOptions } from '../../chain/esplora-client.js';
import type { RpcClient } from '../../ipc/rpc.js';
import type { WriterApi, WriterStatus } from '../../messages/writer.js';

export type ChainMode = 'light' | 'blocks';

/** Following the chain comes first in the chain-data budget (src/chain/budget.ts). */
export const TIP: RequestOptions = { priority: 'tip' };

export interface FollowingHost {
  readonly chain: EsploraClient;
  readonly writer: RpcClient<WriterApi>;
  /** The follower is stopping: a step failing now is not a failure. */
  isStopped(): boolean;
  /** The chain's tip as the endpoint last named it. */
  tipHeight(): number | null;
  tipHash(): string | null;
  /** The endpoint named its tip; without `hash`, the hash known stays. */
  setTip(height: number, hash?: string): void;
  /** The endpoint answered: an error it caused is over (a halt or a writer error stays). */
  endpointAnswered(): void;
  /** The writer's header tip as the follower last saw it (its processed block before it holds a header). */
  headerTipHeight(): number | null;
  /** Every writer status a mode receives. */
  noteStatus(st: WriterStatus): void;
  /** The status the writer answered for an update, and progress lines. */
  noteApplied(st: WriterStatus, reorgDepth: number): void;
  /** A `catching up` line now and then while behind, else one per block applied. */
  logProgress(done: number, stateRoot: string | null, reorgDepth: number): void;
  /** A poll failed (the timer's, one asked for by gossip, an application): the one place that reports it. */
  pollFailed(e: unknown): void;
}
