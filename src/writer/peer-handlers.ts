/** Writer handlers of WriterPeerApi (issue 8). */
import type { Handlers } from '../ipc/rpc.js';
import type { WriterPeerApi } from '../messages.js';
import { NodeError } from '@svc-node/protocol/errors';
import { contractIdPage, PeerQueries } from './peer-queries.js';
import { packPeerPayload } from '../packed-payload.js';
import type { Writer } from './writer.js';

export function writerPeerHandlers(writer: Writer): Handlers<WriterPeerApi> {
  const q = new PeerQueries(writer);
  const l = writer.ledger;
  return {
    peerContractIds: (p) => contractIdPage(l.contractIds(), p.after, p.limit),
    peerSummary: (p) => q.summary(p.contract_id, p.after_txid, p.limit),
    peerRoot: (p) => q.root(p.contract_id),
    peerFingerprints: () => q.fingerprints(),
    peerTxids: (p) => q.txids(p.contract_id, p.offset, p.limit),
    peerRanges: (p) => q.ranges(p.contract_id, p.ranges),
    peerPayload: async (p) => packPeerPayload(await q.payload(p.txid)),
    peerPayloads: async (p) => (await q.payloads(p.txids)).map(packPeerPayload),
    peerStateRoots: (p) => q.stateRoots(p.from, p.to),
    peerSettle: () => writer.settled(),
    peerVerifyReplay: () =>
      writer.mutate(async () => {
        if (l.tip && l.anchor && !l.halted) {
          try {
            // The ledger's own rule: a replay that disagrees with a stored root halts.
            await l.rederive(l.tip.height, { dropJournalAbove: false, verifyBelow: l.tip.height + 1 });
          } catch (e) {
            if (!(e instanceof NodeError)) await l.halt('internal_error', `internal error while re-deriving for a divergence check: ${(e as Error).message}`);
          }
        }
        return writer.status();
      }),
  };
}
