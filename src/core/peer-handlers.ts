/**
 * Core handlers of PeerApi (issue 8): what the gossip process asks. Every payload a peer
 * sends runs through the same Intake methods as REST; the answers about contracts,
 * payloads and state roots come from the writer (src/writer/peer-queries.ts).
 */
import type { Handlers } from '../ipc/rpc.js';
import { zeroCounters, type CallSubmission, type DeployExtras, type DivergenceReport, type GossipCounters, type PackedPayload, type PeerApi, type WirePayload } from '../messages.js';
import { checkEvidence, evidenceError, type Evidence, type Inclusion } from '@svc-node/protocol/evidence';
import { parseHeaderBytes } from '@svc-node/protocol/bitcoin';
import { NodeError, toWire } from '@svc-node/protocol/errors';
import { MAX_PAYLOAD_BYTES } from '@svc-node/protocol/limits';
import type { Core } from './core.js';
import { HEX32 } from '@svc-node/protocol/identifiers';
import { unpackOwn } from '../packed-payload.js';


/** What the gossip process last reported, for node_status. */
export class PeerState {
  peers = 0;
  counters: GossipCounters = zeroCounters();
  divergence: DivergenceReport | null = null;
}

/** A peer's payload as the arguments of the REST intake path; the same limits and shapes. */
export function intakeInput(p: WirePayload): { kind: 'call'; submission: CallSubmission } | { kind: 'deploy'; body: Record<string, unknown>; extras: DeployExtras } {
  if (!p || typeof p !== 'object' || !(p.body instanceof Uint8Array)) throw new NodeError('bad_request', 'payload must carry a body');
  if (p.body.length > MAX_PAYLOAD_BYTES) throw new NodeError('payload_too_large', `payload exceeds ${MAX_PAYLOAD_BYTES} bytes`);
  if (typeof p.txid !== 'string' || !HEX32.test(p.txid)) throw new NodeError('bad_request', 'txid must be 32 bytes', { field: 'txid' });
  if (p.kind === 'call') {
    if (typeof p.contract_id !== 'string' || !HEX32.test(p.contract_id)) throw new NodeError('bad_request', 'contract_id must be 32 bytes', { field: 'contract_id' });
    return { kind: 'call', submission: { txid: p.txid, contract_id: p.contract_id, payload: p.body, evidence: p.evidence ?? undefined } };
  }
  if (p.kind !== 'deploy') throw new NodeError('bad_request', 'payload kind must be call or deploy', { field: 'kind' });
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(p.body));
  } catch {
    throw new NodeError('bad_request', 'deploy body is not UTF-8 JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new NodeError('bad_request', 'deploy body must be a JSON object');
  if ((body as Record<string, unknown>)['txid'] !== p.txid) throw new NodeError('bad_request', 'deploy body names another txid than the payload', { field: 'txid' });
  return { kind: 'deploy', body: body as Record<string, unknown>, extras: { evidence: p.evidence ?? undefined } };
}

/** The wire form of a payload REST intake just stored, for the gossip process. */
export function callPayload(s: CallSubmission, evidence: Evidence | null): WirePayload {
  return { kind: 'call', txid: s.txid, contract_id: s.contract_id, body: s.payload, evidence };
}

/** The registration as gossip sends it: the record without `anchor_tx` (that travels as evidence). */
export function deployPayload(body: Record<string, unknown>, evidence: Evidence | null): WirePayload {
  const { anchor_tx: _evidence, ...record } = body;
  return { kind: 'deploy', txid: String(body['txid']), contract_id: '', body: new Uint8Array(Buffer.from(JSON.stringify(record), 'utf8')), evidence };
}

/** Whether a kept inclusion is the one a peer claimed (the same block, index and branch). */
function sameInclusion(kept: Inclusion | null | undefined, claimed: Inclusion): boolean {
  return (
    !!kept &&
    kept.blockHash === claimed.blockHash &&
    kept.height === claimed.height &&
    kept.txIndex === claimed.txIndex &&
    kept.branch.length === claimed.branch.length &&
    kept.branch.every((h, i) => Buffer.compare(h, claimed.branch[i]!) === 0)
  );
}

/**
 * A peer's evidence that names another block than this node's verified header chain
 * holds at that height is refused `bad_evidence` before intake: the writer would keep a
 * claim for a block it has not applied yet and only ignore it when the block comes, so
 * the payload would wait for a block that never names it instead of being taken from an
 * honest peer.
 */
async function refuseOffChain(core: Core, txid: string, ev: Evidence | null | undefined, held: HeldHashes = new HeldHashes(core)): Promise<void> {
  for (const [what, inc] of [['confirmation', ev?.confirmed], ['spend', ev?.spentBy?.at]] as const) {
    if (!inc) continue;
    const hash = await held.at(inc.height);
    if (hash !== null && hash !== inc.blockHash) {
      throw new NodeError('bad_evidence', `the evidence sent with ${txid} names block ${inc.blockHash} for its ${what} at height ${inc.height}; this node's header chain holds ${hash} there`);
    }
  }
}

/**
 * The hashes of the headers this node holds, each height read and hashed once for a
 * batch of peer payloads (a block's payloads all name its header).
 */
class HeldHashes {
  private readonly byHeight = new Map<number, Promise<string | null>>();
  constructor(private readonly core: Core) {}

  at(height: number): Promise<string | null> {
    let h = this.byHeight.get(height);
    if (!h) {
      h = this.core.writer.call('headers', { from: height, count: 1 }).then(([header]) => (header ? parseHeaderBytes(header).hash : null));
      this.byHeight.set(height, h);
    }
    return h;
  }
}

/**
 * A peer's evidence for a pending payload the node holds (sync asks for it): the checks
 * intake runs on evidence (checkEvidence: the anchor hashes to the txid, branches fold,
 * the spender spends the named outpoint), then the writer's against its header chain
 * (Writer.takeEvidence keeps only claims that hold there). A claim the writer did not
 * keep is refused `bad_evidence`, so the peer that sent it is counted.
 */
async function takePeerEvidence(core: Core, txid: string, sent: Evidence): Promise<{ taken: boolean }> {
  const w = core.writer;
  const held = await w.call('payloadAt', { txid });
  if (!held) return { taken: false };
  let outpoint: { txid: string; vout: number } | null = null;
  if (held.kind === 'call') {
    const rec = await w.call('call', { txid });
    if (!rec || rec.status !== 'pending') return { taken: false };
    const [otxid, vout] = rec.outpoint.split(':') as [string, string];
    outpoint = { txid: otxid, vout: Number(vout) };
  } else if ((await w.call('contract', { id: held.contract_id }))?.status !== 'pending') return { taken: false };
  const checked = checkEvidence(txid, outpoint, sent);
  if (!checked.ok) throw evidenceError(checked);
  // A 64-byte spender without its block's txids proves nothing, and is no lie either: left
  // out (the node's deferred check reads that block), so the peer is not counted for it.
  const evidence = checked.proven;
  await refuseOffChain(core, txid, evidence);
  const covers = (e: Evidence | null): boolean =>
    (!evidence.confirmed || sameInclusion(e?.confirmed, evidence.confirmed)) && (!evidence.spentBy || !outpoint || sameInclusion(e?.spentBy?.at, evidence.spentBy.at));
  // Already held (kept for a block not applied yet): nothing to write.
  if (covers(await w.call('payloadEvidence', { txid }))) return { taken: false };
  if (!(await w.call('takeEvidence', { txid, evidence }))) return { taken: false };
  const kept = await w.call('payloadEvidence', { txid });
  const refused: string[] = [];
  if (evidence.confirmed && !sameInclusion(kept?.confirmed, evidence.confirmed)) refused.push(`confirmation at ${evidence.confirmed.height}`);
  if (evidence.spentBy && outpoint && !sameInclusion(kept?.spentBy?.at, evidence.spentBy.at)) refused.push(`spend at ${evidence.spentBy.at.height}`);
  if (refused.length > 0) throw new NodeError('bad_evidence', `the evidence sent for ${txid} does not hold against this node's chain: ${refused.join('; ')}`);
  return { taken: true };
}

/** A peer's payload through REST's intake, its evidence first checked against this node's headers. */
export async function submitPeerPayload(core: Core, sent: PackedPayload, held?: HeldHashes): Promise<{ created: boolean }> {
  // A copy of its own: the views it unpacks to go on to the pool and the writer.
  const payload = unpackOwn(sent);
  const input = intakeInput(payload);
  await refuseOffChain(core, payload.txid, payload.evidence, held);
  const r = input.kind === 'call' ? await core.intake.submitCall(input.submission) : await core.intake.submitDeploy(input.body, input.extras);
  return { created: r.created };
}

/** A writer answer about a contract, or not_found when the writer does not know it (null). */
function known<T>(contractId: string, answer: T | null): T {
  if (answer === null) throw new NodeError('not_found', `contract ${contractId} is not known to this node`);
  return answer;
}

export function peerHandlers(core: Core): Handlers<PeerApi> {
  const w = core.writer;
  return {
    peerSubmit: async (p) => {
      try {
        return await submitPeerPayload(core, p.payload);
      } catch (e) {
        // Refused only for a header this node lacks yet: kept to be tried again once it arrives.
        if (typeof p.from === 'string' && p.from !== '') core.holdUnproven(p.payload, p.from, e);
        throw e;
      }
    },
    peerSubmitMany: async (p) => {
      // Only sync sends many at once: its first round holds block application while it delivers.
      core.follower.notePeerPayloads(p.payloads.length);
      const held = new HeldHashes(core);
      return {
        results: await Promise.all(
          p.payloads.map((payload) =>
            submitPeerPayload(core, payload, held).then(
              (r) => ({ ok: true as const, created: r.created }),
              (e: unknown) => ({ ok: false as const, error: toWire(e) }),
            ),
          ),
        ),
      };
    },
    peerPrepare: (p) => core.intake.preparePayload(intakeInput(unpackOwn(p.payload))),
    peerContractIds: (p) => w.call('peerContractIds', { after: p.after, limit: p.limit }),
    peerSummary: async (p) => known(p.contract_id, await w.call('peerSummary', { contract_id: p.contract_id, after_txid: p.after_txid, limit: p.limit })),
    peerRoot: async (p) => known(p.contract_id, await w.call('peerRoot', { contract_id: p.contract_id })),
    peerFingerprints: () => w.call('peerFingerprints', {}),
    peerTxids: async (p) => known(p.contract_id, await w.call('peerTxids', { contract_id: p.contract_id, offset: p.offset, limit: p.limit })),
    peerRanges: async (p) => known(p.contract_id, await w.call('peerRanges', { contract_id: p.contract_id, ranges: p.ranges })),
    peerPayload: (p) => w.call('peerPayload', { txid: p.txid }),
    peerPayloads: (p) => w.call('peerPayloads', { txids: p.txids }),
    peerStateRoots: (p) => w.call('peerStateRoots', { from: p.from, to: p.to }),
    peerSettle: async () => {
      const s = await w.call('peerSettle', {});
      return { processed_height: s.processedHeight, state_root: s.stateRoot };
    },
    peerAdvert: async () => {
      const [v, tip] = await Promise.all([core.state.current(), core.follower.announcedTip()]);
      return { height: v.height, tip };
    },
    peerTip: (p) => {
      core.follower.notePeerTip(p.height, p.header, p.announcer);
      return { ok: true as const };
    },
    peerVerifyReplay: async () => {
      const s = await w.call('peerVerifyReplay', {});
      return { halted: s.halted, halt_reason: s.haltReason };
    },
    peerHeaders: async (p) => {
      const [headers, st] = await Promise.all([w.call('headers', { from: p.from, count: p.count }), w.call('status', {})]);
      return { headers, tip: st.headerHeight };
    },
    peerHeaderState: async () => {
      const st = await w.call('status', {});
      return { anchor: st.anchorHeight, tip: st.headerHeight, takesHeaders: core.follower.takesPeerHeaders };
    },
    peerSubmitHeaders: async (p) => {
      const first = p.headers[0];
      if (!first) return { accepted: 0, linked: true };
      if (first.length !== 80) throw new NodeError('bad_request', 'a block header is 80 bytes');
      // The block below the run on this node's chain: processed (the journal), else a held header.
      const st = await w.call('status', {});
      const below =
        (await w.call('knownHash', { height: p.from - 1 })) ??
        (await w.call('headers', { from: p.from - 1, count: 1 })).map((h) => parseHeaderBytes(h).hash)[0] ??
        (st.processedHeight === p.from - 1 ? st.processedHash : null);
      if (!below || parseHeaderBytes(first).prevHash !== below) return { accepted: 0, linked: false };
      try {
        return { ...(await core.follower.submitHeaders(p.from, p.headers)), linked: true };
      } catch (e) {
        // The endpoint has no block at the run's top: the run cannot be authenticated, and
        // an honest peer's runs end HEADER_RUN_TIP_MARGIN below its tip (gossip/sync.ts).
        const top = p.from + p.headers.length - 1;
        if (e instanceof NodeError && e.code === 'not_found') throw new NodeError('bad_evidence', `the chain-data endpoint has no block at height ${top}, where the peer's headers end`);
        throw e;
      }
    },
    peerPending: async (p) => {
      const [page, v] = await Promise.all([w.call('pendingPayloads', { after: p.after, limit: p.limit }), core.state.current()]);
      // Evidence that already places a payload in a block still ahead: that block decides
      // it, and no peer's evidence can do better (a fresh node's synced payloads, 100,000
      // of them, were each asked for again). A claim at or below the tip that left the
      // payload pending names a block the chain left: asked, as for no claim at all.
      const tip = v.height ?? -1;
      return {
        txids: page.filter((x) => x.settles_at === null || x.settles_at <= tip).map((x) => x.txid),
        next: page.length < p.limit ? '' : page[page.length - 1]!.txid,
      };
    },
    peerTakeEvidence: (p) => takePeerEvidence(core, p.txid, p.evidence),
    peerSyncListed: (p) => {
      if (!Number.isSafeInteger(p.payloads) || p.payloads < 0) throw new NodeError('bad_request', 'payloads must be a non-negative integer', { field: 'payloads' });
      core.follower.notePeerPayloadsListed(p.payloads);
      return { ok: true as const };
    },
    peerSyncDelivered: (p) => {
      if (p.height !== null && (!Number.isSafeInteger(p.height) || p.height < 0)) throw new NodeError('bad_request', 'height must be a non-negative integer or null', { field: 'height' });
      core.follower.notePeerDelivered(p.height ?? Infinity);
      return { ok: true as const };
    },
    peerInitialSyncDone: () => {
      core.follower.noteInitialSync();
      return { ok: true as const };
    },
    peerReport: (p) => {
      core.peerState.peers = p.peers;
      core.peerState.counters = p.counters;
      core.peerState.divergence = p.divergence;
      return { ok: true as const };
    },
  };
}
