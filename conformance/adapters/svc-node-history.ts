/**
 * svc-node's answer to `history.run` (conformance/README.md, "Histories"): a scripted
 * history of raw blocks, reorganisations and payload arrivals played through the node's
 * own writer (src/writer/writer.ts: the ledger's acceptance, block application, rewind,
 * re-derivation and late-payload replays) on a RocksDB store in a fresh temporary
 * directory. Intake's checks of each payload are the node's own functions (the pool's
 * openCall and checkDeploy tasks, checkEvidence on the anchor's bytes, the binding checks,
 * the writer's contract look-up), in intake's order; what intake asks the chain endpoint
 * is answered by the history itself (the anchor is in the payload). Coin evidence is node
 * policy, not consensus (docs/STATE.md, "Coin evidence"): every payload is taken as paid.
 * Nothing is shared between two histories.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import canonicalizeModule from 'canonicalize';
import type { Transaction } from 'bitcoinjs-lib';
import { NodeError } from '@svc-node/protocol/errors';
import { configureLogging, logger } from '../../src/log.js';
import { parseHex } from '@svc-node/protocol/hash';
import { headerHash, headerPrevHash, parseRawBlock, type ParsedBlock } from '@svc-node/protocol/bitcoin';
import { REGTEST_POW } from '@svc-node/protocol/activation';
import { HeaderFollower, type HeaderRow } from '../../src/chain/header-follower.js';
import { connectedBlockOf } from '../../src/chain/watcher.js';
import { blockInputOf, spentByIn } from '../../src/chain/connected-block.js';
import { runTask, type OpenedCall } from '../../src/pool/tasks.js';
import { checkEvidence, evidenceError, type Evidence, type FoldedRoots, type Inclusion } from '@svc-node/protocol/evidence';
import { merkleBranches } from '@svc-node/protocol/merkle-branch';
import { bindingError, checkCallBinding, checkDeployBinding } from '@svc-node/protocol/binding';
import { repeatOrConflict } from '@svc-node/protocol/rules';
import { contractIdHex } from '@svc-node/protocol/contract';
import { fromWire } from '@svc-node/protocol/errors';
import { Writer } from '../../src/writer/writer.js';
import type { CallEnvelope } from '@svc-node/protocol/envelope';
import type { CheckedDeploy } from '@svc-node/protocol/vm/deploy-check';
import type { BlockInput, ContractRecord } from '../../src/records.js';
import { pendingCallRecord } from '../../src/records.js';
import { evidenceFromJson, type Answer } from './svc-node-answers.js';

const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

type Json = Record<string, unknown>;

function bytes(hex: unknown, what: string): Uint8Array {
  const b = typeof hex === 'string' ? parseHex(hex) : null;
  if (!b) throw new Error(`input ${what} is not lowercase hex`);
  return b;
}

/** A pool task's value, or its refusal thrown as the NodeError intake would throw. */
function pooled<T>(r: ReturnType<typeof runTask>): T {
  if (!r.ok) throw fromWire(r.error);
  return r.value as T;
}

/** The anchor's bytes checked as intake checks what a client sends as `anchor_tx` (src/core/intake.ts, evidenceOf). */
function anchorOf(txid: string, outpoint: { txid: string; vout: number } | null, anchorHex: unknown) {
  const checked = checkEvidence(txid, outpoint, { anchorTx: bytes(anchorHex, 'anchor_tx'), confirmed: null, spentBy: null });
  if (!checked.ok) throw new NodeError('bad_request', `anchor_tx is not the anchoring transaction ${txid}: ${checked.reason}`, { field: 'anchor_tx' });
  return checked.anchor;
}

/** Intake's checks of a deploy registration (vetDeploy), then the writer's acceptance; whether evidence went with it. */
async function deploy(w: Writer, s: Json, confirmed: Inclusion | null): Promise<boolean> {
  const txid = s.txid as string;
  const metadata = (s.metadata as Json | undefined) ?? {};
  const checked = pooled<CheckedDeploy>(runTask({ kind: 'checkDeploy', body: { txid, ...(s.artifact as Json) } }));
  const bodyHash = createHash('sha256').update(canonicalize({ ...checked.core, metadata }) ?? '').digest('hex');
  const sent = stepEvidence(s);
  // A repeat is answered as such, unless it brings a confirmation (intake's vetDeploy).
  if (repeatOrConflict(await w.ledger.payloadAt(txid), txid, 'deploy', bodyHash) === 'repeat' && !sent?.confirmed) return false;
  const fromStep = sent ? checkedSent(txid, null, sent) : null;
  const binding = checkDeployBinding(fromStep?.anchor ?? anchorOf(txid, null, s.anchor_tx), Buffer.from(checked.codeHash, 'hex'));
  if (!binding.ok) throw bindingError(binding.reason);
  const rec: ContractRecord = {
    contract_id: contractIdHex(Buffer.from(txid, 'hex'), Buffer.from(checked.codeHash, 'hex')),
    txid,
    code_hash: checked.codeHash,
    status: 'pending',
    block_height: null,
    tx_index: null,
    artifact: { ...checked.core, metadata },
    body_hash: bodyHash,
  };
  const ev = fromStep ?? sentEvidence(txid, null, s.anchor_tx, confirmed);
  await w.acceptDeploy(rec, ev?.evidence, ev?.folded);
  return ev !== null;
}

/** Intake's checks of a call (vetCall), then the writer's acceptance with intake's outpoint check; whether evidence went with it. */
async function call(w: Writer, s: Json, confirmed: Inclusion | null): Promise<boolean> {
  const taken = await vetCall(w, s, confirmed);
  if (taken) await w.acceptCall(...taken);
  return taken?.[2] !== undefined;
}

/** Intake's checks of a call (vetCall): what the writer's acceptance is handed (its evidence third), or null for a repeat (answered without it). */
async function vetCall(w: Writer, s: Json, confirmed: Inclusion | null): Promise<Parameters<Writer['acceptCall']> | null> {
  const txid = s.txid as string;
  const payload = bytes(s.payload, 'payload');
  const opened = pooled<OpenedCall>(runTask({ kind: 'openCall', payload }));
  const l = w.ledger;
  const lookedUpAt = l.tip ? { height: l.tip.height, epoch: l.chainEpoch } : null;
  const bodyHash = createHash('sha256').update(opened.contractId).update(Buffer.from(payload).toString('base64')).digest('hex');
  const sent = stepEvidence(s);
  // A repeat is answered as such, unless it brings evidence placing or dropping it (intake's vetCall).
  if (repeatOrConflict(await l.payloadAt(txid), txid, 'call', bodyHash) === 'repeat' && !(sent?.confirmed || sent?.spentBy)) return null;
  if (l.contract(opened.contractId) === null) throw new NodeError('unknown_contract', `contract ${opened.contractId} is not known to this node`);
  const [otxid, ovout] = opened.outpoint.split(':') as [string, string];
  const named = { txid: otxid, vout: Number(ovout) };
  const fromStep = sent ? checkedSent(txid, named, sent) : null;
  const anchor = fromStep?.anchor ?? anchorOf(txid, named, s.anchor_tx);
  const view = { contractId: Buffer.from(opened.contractId, 'hex'), outpointTxid: Buffer.from(otxid, 'hex'), outpointVout: Number(ovout) } as unknown as CallEnvelope;
  const binding = checkCallBinding(anchor, view, Buffer.from(opened.envelopeHash, 'hex'));
  if (!binding.ok) throw bindingError(binding.reason);
  const rec = pendingCallRecord(txid, opened, Buffer.from(payload).toString('base64'));
  const ev = fromStep ?? sentEvidence(txid, named, s.anchor_tx, confirmed);
  return [rec, { lookedUpAt, spentBy: null, memoryOnly: true }, ev?.evidence, ev?.folded];
}

/**
 * The evidence a payload comes with when its anchor is confirmed in a block the node
 * processed, for a node that reads blocks as their header alone (a peer's or a client's:
 * the anchor and its inclusion), checked and folded as intake checks it; null otherwise.
 */
function sentEvidence(txid: string, outpoint: { txid: string; vout: number } | null, anchorHex: unknown, confirmed: Inclusion | null): { evidence: Evidence; folded: FoldedRoots } | null {
  if (!confirmed) return null;
  const checked = checkEvidence(txid, outpoint, { anchorTx: bytes(anchorHex, 'anchor_tx'), confirmed, spentBy: null });
  if (!checked.ok) throw new Error(`the history's own inclusion of ${txid} does not check: ${checked.reason}`);
  return { evidence: checked.proven, folded: { confirmed: checked.confirmedRoot, spender: checked.spenderRoot } };
}

/**
 * The evidence a step sends with its payload (`evidence`: `{confirmed, spent_by}` in
 * evidence.check's form, the anchor's bytes the step's `anchor_tx`), as a client or a
 * peer writes it, true or not; undefined when the step has none.
 */
function stepEvidence(s: Json): Evidence | undefined {
  if (s.evidence === undefined) return undefined;
  return evidenceFromJson({ ...(s.evidence as Json), anchor_tx: s.anchor_tx });
}

/** Sent evidence checked as intake checks it (evidenceOf): what needs no chain, else refused bad_evidence. */
function checkedSent(txid: string, outpoint: { txid: string; vout: number } | null, ev: Evidence): { evidence: Evidence; folded: FoldedRoots; anchor: Transaction } {
  const checked = checkEvidence(txid, outpoint, ev);
  if (!checked.ok) throw evidenceError(checked);
  return { evidence: checked.proven, folded: { confirmed: checked.confirmedRoot, spender: checked.spenderRoot }, anchor: checked.anchor };
}

/**
 * A light node's header follower: the node's own (src/chain/header-follower.ts), wired to
 * the writer as src/core/following/light-mode.ts wires it through the writer thread, with
 * the history's best chain (`endpoint`: the anchor, then its blocks) as the chain-data
 * endpoint. Its header sync (followHeaders: the ten newest blocks, linked where they meet
 * the node's chain, else pages of ten) stores every header the node holds, as on a node
 * following the chain; `shown`: every block the history showed, which the endpoint serves by
 * hash. The endpoint's rows stop above the anchor: the follower links nothing below the
 * anchor's child (it holds no chain there).
 */
function lightFollower(writer: () => Writer, endpoint: () => readonly HeldBlock[], shown: ReadonlyMap<string, ParsedBlock>): HeaderFollower {
  const rows = (top?: number): HeaderRow[] => {
    const held = endpoint().filter((b): b is HeldBlock & { parsed: ParsedBlock } => b.parsed !== null && b.height <= (top ?? Infinity));
    return held
      .slice(-10)
      .reverse()
      .map((b) => ({ height: b.height, hash: b.hash, prevHash: b.parsed.header.prevHash, header: Buffer.from(b.parsed.header.hex, 'hex') }));
  };
  return new HeaderFollower({
    pow: REGTEST_POW,
    source: {
      blocks: async (top) => rows(top),
      rawBlock: async (hash) => {
        const b = shown.get(hash);
        if (!b) throw new Error(`the history shows no block ${hash}`);
        return b;
      },
      txBlock: async (txid) => {
        const at = inclusionOf(endpoint(), txid);
        return at && { height: at.height, hash: at.blockHash };
      },
    },
    sink: {
      state: async () => {
        const st = writer().status();
        return {
          processed: { height: st.processedHeight!, hash: st.processedHash! },
          headerTip: st.headerHeight === null ? null : { height: st.headerHeight, hash: st.headerHash! },
          anchorHeight: st.anchorHeight!,
          pending: st.pendingCalls + st.pendingDeploys,
        };
      },
      headers: (from, count) => writer().ledger.headers(from, count),
      processedHash: async (height) => writer().ledger.knownHash(height),
      putHeaders: async (from, run, truncate) => void (await writer().putHeaders(from, run, truncate)),
      apply: (u) => writer().applyChainUpdate(u),
      storeSpentBy: (items) => writer().storeSpentBy(items),
      unplacedAnchors: async () => (await writer().ledger.pendingPayloads('', Number.MAX_SAFE_INTEGER)).filter((p) => p.settles_at === null).map((p) => p.txid),
    },
  });
}

/** Where the best chain holds `txid`: its inclusion (the endpoint's merkle proof), or null. */
function inclusionOf(chain: readonly HeldBlock[], txid: string): Inclusion | null {
  for (const b of chain) {
    const index = b.parsed?.txids.indexOf(txid) ?? -1;
    if (index < 0) continue;
    const leaves = b.parsed!.txids.map((t) => Buffer.from(t, 'hex').reverse());
    return { blockHash: b.hash, height: b.height, txIndex: index, branch: merkleBranches(leaves, [index])[0]! };
  }
  return null;
}

/** A block of the best chain: as parsed, and as the core hands it to the writer (a block read in full). */
interface HeldBlock {
  height: number;
  hash: string;
  parsed: ParsedBlock | null;
}

function blockInput(b: ParsedBlock, height: number): BlockInput {
  return blockInputOf(connectedBlockOf(b, height));
}

/**
 * The node's deferred checks (src/core/deferred/), played after every step with
 * the history's best chain as the chain endpoint: a pending payload whose anchor a
 * processed block holds gets its inclusion as evidence (a node reading blocks as their
 * header alone learns it so); a pending call whose named outpoint a transaction other
 * than its anchor spends in a processed block gets that spend (takeEvidence), so it is
 * dropped at that block however late its payload came (a node's memory of recent spends,
 * which intake reads, may not reach it: after a restart or a re-derivation). Eviction of
 * payloads whose anchor the endpoint shows nowhere is not played: a history has no
 * mempool. `withEvidence`: the payloads the node was sent evidence for (it keeps a record
 * of each); the others, taken as paid without any (coin evidence is not played), have
 * their anchor's bytes from `anchors` instead.
 */
async function deferredChecks(w: Writer, chain: readonly HeldBlock[], anchors: ReadonlyMap<string, Uint8Array>, withEvidence: ReadonlySet<string>): Promise<void> {
  const l = w.ledger;
  for (const [txid, anchorTx] of anchors) {
    const held = await l.payloadAt(txid);
    if (!held) continue;
    const rec = held.kind === 'call' ? await l.call(txid) : null;
    const pending = held.kind === 'call' ? rec?.status === 'pending' : l.contract(held.contract_id)?.status === 'pending';
    if (!pending) continue;
    // The evidence the node keeps for the payload (at least its anchor's bytes, as intake took them):
    // the node's own checks build on it and check nothing without it (src/core/deferred/endpoint-lookups.ts).
    const stored = await w.payloadEvidence(txid);
    if (!stored && withEvidence.has(txid)) continue;
    const kept = stored ?? { anchorTx, confirmed: null, spentBy: null };
    const confirmed = inclusionOf(chain, txid);
    if (confirmed) {
      // Its anchor is in a processed block the node read as its header alone: placed there.
      await w.takeEvidence(txid, { ...kept, confirmed });
      await w.settled();
      continue;
    }
    if (!rec) continue;
    const [otxid, vout] = rec.outpoint.split(':') as [string, string];
    for (const b of chain) {
      const p = b.parsed;
      if (!p) continue;
      const index = p.txs.findIndex((tx, i) => i > 0 && tx.ins.some((inp) => Buffer.from(inp.hash).reverse().toString('hex') === otxid && inp.index === Number(vout)));
      if (index < 0) continue;
      const spentBy = spentByIn({ hash: b.hash, height: b.height, txids: p.txids, txAt: (i) => p.txs[i]! }, rec.outpoint, p.txids[index]!);
      if (spentBy) await w.takeEvidence(txid, { ...kept, spentBy });
      await w.settled();
      break;
    }
  }
}

export async function historyRun(input: Json): Promise<Answer> {
  // The writer logs (a reorganisation is a warning): never on the adapter's stdout.
  configureLogging({ filter: 'error', sink: (line) => void process.stderr.write(line + '\n') });
  const dir = mkdtempSync(join(tmpdir(), 'svc-conformance-history-'));
  const open = () => Writer.open(join(dir, 'db'), 'conformance-history', logger('conformance'));
  let w = await open();
  try {
    const anchor = input.anchor as { height: number; hash: string };
    await w.initAnchor(anchor);
    const chain: HeldBlock[] = [{ ...anchor, parsed: null }];
    const arrivals: Json[] = [];
    const checks: Json[] = [];
    const deployTxids: string[] = [];
    const callTxids: string[] = [];
    /** The anchors of the payloads sent, by txid: what intake would have kept as their evidence. */
    const anchors = new Map<string, Uint8Array>();
    /** The payloads taken with evidence (a confirmation, a spend): the node keeps a record of each. */
    const withEvidence = new Set<string>();
    /** `light`: blocks are applied as their header alone, as a light node's follower hands them over. */
    const light = input.node === 'light';
    if (input.node !== undefined && input.node !== 'full' && !light) throw new Error('input node must be "full" or "light"');
    /** `deferred: false`: the deferred checks are played only at `deferred` steps; the node decides from what it reads and is sent alone. */
    if (input.deferred !== undefined && typeof input.deferred !== 'boolean') throw new Error('input deferred must be a boolean');
    const deferred = input.deferred !== false;
    /**
     * Blocks of the chain endpoint's best chain above the node's processed tip (`headers`
     * steps): the deferred checks and a light node's senders see them; a light node holds
     * their headers (its header sync) before it connects them.
     */
    let ahead: HeldBlock[] = [];
    const known = () => [...chain, ...ahead];
    /** Every block the history showed, by hash (the endpoint serves a block by hash). */
    const shown = new Map<string, ParsedBlock>();
    /** A light node's header follower, built anew as the node starts. */
    const startFollower = () => lightFollower(() => w, known, shown);
    let follower = startFollower();
    for (const [i, s] of (input.steps as Json[]).entries()) {
      switch (s.kind) {
        case 'headers': {
          const parsed = (s.blocks as string[]).map((b, j) => parseRawBlock(bytes(b, `steps[${i}].blocks[${j}]`)));
          const base = known().at(-1)!.height + 1;
          if (parsed[0] && parsed[0].header.prevHash !== known().at(-1)!.hash) throw new Error(`steps[${i}]: the headers do not extend the history's best chain`);
          parsed.forEach((b, j) => ahead.push({ height: base + j, hash: b.hash, parsed: b }));
          for (const b of parsed) shown.set(b.hash, b);
          // A light node's follower polls the endpoint: its header sync stores what it finds, each run checked as it checks every run.
          if (light) await follower.followHeaders();
          break;
        }
        case 'blocks':
        case 'reorg': {
          const depth = s.kind === 'reorg' ? (s.depth as number) : 0;
          if (depth >= chain.length) throw new Error(`steps[${i}]: a reorganisation below the anchor`);
          const disconnected = chain.splice(chain.length - depth, depth).reverse();
          const parsed = (s.blocks as string[]).map((b, j) => parseRawBlock(bytes(b, `steps[${i}].blocks[${j}]`)));
          const base = chain.at(-1)!.height + 1;
          // Blocks announced by a `headers` step are connected now; if the chain went another way, the endpoint's best chain is the new one.
          const sameAsAhead = depth === 0 && parsed.every((b, j) => ahead[j]?.hash === b.hash);
          ahead = sameAsAhead ? ahead.slice(parsed.length) : [];
          for (const b of parsed) shown.set(b.hash, b);
          // The endpoint's best chain is now the new one.
          parsed.forEach((b, j) => chain.push({ height: base + j, hash: b.hash, parsed: b }));
          let connected: BlockInput[];
          if (light) {
            // A light node's follower polls the endpoint: its header sync stores what it finds
            // (nothing when it holds the best chain's headers already: announced by a `headers`
            // step), then it reads the blocks back from the stored headers as blocks of a header
            // alone (applyBlocks: hash and link from the stored header). The blocks it connects
            // are the step's; those announced above them wait (as the core's apply ceiling holds
            // blocks back).
            await follower.followHeaders();
            const stored = await w.ledger.headers(base, parsed.length);
            if (stored.length !== parsed.length) throw new Error(`steps[${i}]: the node holds ${stored.length} of the ${parsed.length} headers it was handed`);
            connected = stored.map((h, j) => ({ height: base + j, hash: headerHash(h), prevHash: headerPrevHash(h), txs: [], header: h, headerOnly: true }));
          } else connected = parsed.map((b, j) => blockInput(b, base + j));
          try {
            // A full node's update ends the best chain unless the endpoint announced blocks above
            // it (src/core/following/blocks-mode.ts). A light node's never does: its header
            // follower stores the run that replaces a shorter chain's top with truncate set,
            // the only way its header chain gets shorter.
            await w.applyChainUpdate({ fork_height: base - 1, disconnected, connected, endsChain: !light && ahead.length === 0 });
            await w.settled();
            // With nothing announced above the step's blocks, the poll's applyBlocks goes on up
            // to the node's header tip, as in every poll: nothing is left to apply when the
            // header tip is the block just connected.
            if (light && ahead.length === 0) await follower.applyBlocks();
          } catch (e) {
            // A node that halts (a replay disagreeing with what it stored) answers nothing more.
            if (w.ledger.halted) return { output: { halted: true }, note: w.ledger.haltReason ?? undefined };
            throw e;
          }
          await w.settled();
          break;
        }
        case 'deploy':
        case 'call': {
          (s.kind === 'deploy' ? deployTxids : callTxids).push(s.txid as string);
          try {
            // A light node learns a confirmed anchor's block only from the evidence a payload comes with.
            const confirmed = light ? inclusionOf(known(), s.txid as string) : null;
            if (await (s.kind === 'deploy' ? deploy(w, s, confirmed) : call(w, s, confirmed))) withEvidence.add(s.txid as string);
            // Taken: its anchor is what the node keeps as its evidence (a refused payload's proves nothing).
            if (!anchors.has(s.txid as string)) anchors.set(s.txid as string, bytes(s.anchor_tx, `steps[${i}].anchor_tx`));
            arrivals.push({ step: i, ok: true });
          } catch (e) {
            if (!(e instanceof NodeError)) throw e;
            arrivals.push({ step: i, ok: false, code: e.code });
          }
          if (s.stop_before_replay !== undefined && s.stop_before_replay !== true) throw new Error(`steps[${i}]: stop_before_replay must be true when given`);
          if (s.stop_before_replay === true) {
            // The node stops as soon as the payload is taken: a late payload's replay, queued
            // by its acceptance, is interrupted (owed), and the node resumes it as it starts again.
            await w.close();
            w = await open();
            follower = startFollower();
          }
          // A late payload's replay is queued by its acceptance: played before the next step.
          await w.settled();
          break;
        }
        case 'payloads': {
          // Calls arriving together (a peer's GetPayloads answer): intake checks each in turn,
          // then all are handed to the writer at once, so its next group commit takes them in
          // one acceptance batch.
          const taken: (Parameters<Writer['acceptCall']> | NodeError | null)[] = [];
          for (const [j, p] of (s.payloads as Json[]).entries()) {
            if (p.kind !== 'call') throw new Error(`steps[${i}].payloads[${j}]: only calls arrive together`);
            callTxids.push(p.txid as string);
            try {
              taken.push(await vetCall(w, p, light ? inclusionOf(known(), p.txid as string) : null));
            } catch (e) {
              if (!(e instanceof NodeError)) throw e;
              taken.push(e);
            }
          }
          const answers = await Promise.all(
            taken.map((t) => (Array.isArray(t) ? w.acceptCall(...t).then(() => null, (e: unknown) => (e instanceof NodeError ? e : Promise.reject(e))) : t)),
          );
          for (const [j, e] of answers.entries()) {
            const p = (s.payloads as Json[])[j]!;
            if (e === null && !anchors.has(p.txid as string)) anchors.set(p.txid as string, bytes(p.anchor_tx, `steps[${i}].payloads[${j}].anchor_tx`));
            arrivals.push(e === null ? { step: i, ok: true } : { step: i, ok: false, code: e.code });
          }
          await w.settled();
          break;
        }
        case 'restart':
          // A stop and a start on the same store: memory reloaded from what reached the disk.
          // A light node's follower polls at the next step that changes what the endpoint shows:
          // the endpoint may move while the node is down.
          await w.close();
          w = await open();
          follower = startFollower();
          await w.settled();
          break;
        case 'deferred':
          // The deferred checks, played now (below): with `deferred: false`, the only time they are.
          break;
        case 'check':
          checks.push({ step: i, ...(await snapshot(w, chain, deployTxids, callTxids)) });
          break;
        default:
          throw new Error(`steps[${i}]: unknown kind ${JSON.stringify(s.kind)}`);
      }
      if (deferred || s.kind === 'deferred') await deferredChecks(w, known(), anchors, withEvidence);
    }
    const l = w.ledger;
    if (l.halted) return { output: { halted: true }, note: l.haltReason ?? undefined };
    const blocks: Json[] = [];
    for (const b of chain.slice(1)) {
      const r = await l.stateRootAt(b.height);
      blocks.push({ height: b.height, hash: r?.block_hash ?? null, state_root: r?.state_root ?? null });
    }
    const { deploys, calls } = await snapshot(w, chain, deployTxids, callTxids);
    return { output: { arrivals, checks, blocks, deploys, calls } };
  } finally {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The tip and what the node answers for every payload sent so far (deploys and calls by txid). */
async function snapshot(w: Writer, chain: readonly { height: number }[], deployTxids: readonly string[], callTxids: readonly string[]): Promise<Json> {
  const l = w.ledger;
  const top = await l.stateRootAt(chain.at(-1)!.height);
  const deploys: Json[] = [];
  for (const txid of [...new Set(deployTxids)].sort()) {
    const held = await l.payloadAt(txid);
    const rec = held ? l.contract(held.contract_id) : null;
    deploys.push(rec ? { txid, contract_id: rec.contract_id, status: rec.status, block_height: rec.block_height, tx_index: rec.tx_index } : { txid, status: null });
  }
  const calls: Json[] = [];
  for (const txid of [...new Set(callTxids)].sort()) {
    const rec = await l.call(txid);
    calls.push(rec ? { txid, status: rec.status, block_height: rec.block_height, tx_index: rec.tx_index, result: rec.result ?? null, error_code: rec.error?.code ?? null } : { txid, status: null });
  }
  return { tip: { height: top?.height ?? null, hash: top?.block_hash ?? null, state_root: top?.state_root ?? null }, deploys, calls };
}
