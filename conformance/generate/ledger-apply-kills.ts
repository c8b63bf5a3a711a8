/**
 * Histories for the block application's rules that no other history pinned (the mutation
 * run's survivors of src/writer/ledger/apply-block.ts): a contract's storage size carried
 * from call to call and block to block up to the storage limit (writes, overwrites and
 * deletions, and a call writing two contracts), and what a node keeps across a restart:
 * a (caller, call_id) claim taken before it, and the stamp of a call whose payload comes
 * only after it. Plus a block holding a transaction whose stamp is malformed.
 */
import { callStampScript } from '@svc-node/protocol/stamp';
import { LIMITS } from '@svc-node/protocol/vm/isa';
import type { Value } from '@svc-node/protocol/value';
import { compileSource } from '../../src/compiler/index.js';
import { CHECK, RESTART, Script, artifact, u64 } from './history.js';
import { DEFERRED } from './history-headers.js';
import type { Area, CaseInput } from './kit.js';

/** A contract storing byte strings under u64 keys, alone or in itself and another contract in one call. */
const STORE_SOURCE = `contract Store {
  field blobs: map<u64, bytes>;

  pub fn put(k: u64, v: bytes) -> u64 {
    blobs[k] = v;
    return k;
  }

  pub fn put_both(target: key, k: u64, v: bytes) -> u64 {
    blobs[k] = v;
    let r = call<u64>(target, "put", k, v);
    return r;
  }
}`;

function storeArtifact(): Record<string, unknown> {
  const r = compileSource(STORE_SOURCE, 'store.svc');
  if (!r.ok) throw new Error('ledger-apply-kills: the Store contract does not compile');
  return r.artifact as unknown as Record<string, unknown>;
}

/** The stored size of one entry of `blobs`: its key (the field's name, a separator and the u64) and the value's bytes. */
const ENTRY_KEY_BYTES = 14;
const bytesOf = (n: number, fill: number): Value => ({ type: 'bytes', value: new Uint8Array(n).fill(fill) });
const key = (hex: string): Value => ({ type: 'key', value: new Uint8Array(Buffer.from(hex, 'hex')) });

/**
 * One contract's storage size kept by the node from call to call (PROTOCOL section 4: the
 * limit counts the key and value bytes a contract holds after the call): a new entry, an
 * overwrite by a shorter value, an entry written then deleted (a write of the empty
 * value), then a call that brings the contract to exactly the limit (executed) and one
 * that would pass it by one byte (failed, storage_limit_exceeded). Then a call writing
 * two other contracts (itself and the one it calls), after which each of them is too
 * full for another large entry.
 */
function storageSizeCases(): CaseInput[] {
  const s = new Script(12);
  const store = storeArtifact();
  const a = s.deploy(store);
  const b = s.deploy(store);
  const c = s.deploy(store);
  const limit = LIMITS.storageBytes;
  // After these, C holds key 1 (20,000 bytes): the last entry fills it to exactly the limit.
  const first = 20_000;
  const toLimit = limit - (ENTRY_KEY_BYTES + first) - ENTRY_KEY_BYTES;
  const calls = [
    s.call(c.contractId, 'put', [u64(1n), bytesOf(30_000, 1)]),
    s.call(c.contractId, 'put', [u64(1n), bytesOf(first, 2)]),
    s.call(c.contractId, 'put', [u64(2n), bytesOf(100, 3)]),
    s.call(c.contractId, 'put', [u64(2n), bytesOf(0, 0)]),
    s.call(c.contractId, 'put', [u64(3n), bytesOf(toLimit, 4)]),
    s.call(c.contractId, 'put', [u64(1n), bytesOf(first + 1, 5)]),
  ];
  // A and B differ in every byte of their ids (the node names a contract a call touches by its id's bytes).
  const both = s.call(a.contractId, 'put_both', [key(b.contractId), u64(1n), bytesOf(40_000, 6)]);
  const overA = s.call(a.contractId, 'put', [u64(2n), bytesOf(30_000, 7)]);
  const overB = s.call(b.contractId, 'put', [u64(2n), bytesOf(30_000, 8)]);
  const steps = [a.step, b.step, c.step, ...calls.map((x) => x.step), both.step, overA.step, overB.step, s.mine([a, b, c]), s.mine(calls.slice(0, 3)), CHECK, s.mine(calls.slice(3)), s.mine([both]), s.mine([overA, overB])];
  return [
    {
      id: 'apply-storage-size-across-calls',
      pins: `a contract's storage size carried across calls and blocks (key and value bytes after each call: a new entry, an overwrite by a shorter value, an entry written then deleted): the call bringing it to exactly ${limit} bytes executes, the next, one byte more, fails (storage_limit_exceeded); a call writing itself and the contract it calls (40,000 bytes each) counts each contract's own bytes, so a further 30,000-byte entry fails in both`,
      input: { anchor: s.anchor, steps },
    },
  ];
}

/**
 * A restart between two calls claiming one (caller, call_id): the second, alone in its
 * block after the restart, is invalid (duplicate_call_id); a call whose named outpoint a
 * block spent before the restart, its payload sent after it, is dropped there by the
 * deferred check (played at a `deferred` step: the node's memory of recent spends does
 * not survive a restart, so only the check finds it, against the header the node stored
 * with the block it read in full); a call whose anchor a block held
 * before a restart, its payload sent after it, is decided at that block (the stamp kept
 * on disk), and the replay from there drops again a call the block above dropped; a block holding a transaction with two stamps (malformed, no payload can bind
 * to it) changes nothing. Its twin without deferred checks must give the same answers.
 */
function restartCases(): CaseInput[] {
  const s = new Script(7);
  const d = s.deploy(artifact());
  const claimed = s.call(d.contractId, 'bump', [u64(5n)], 100n);
  const again = s.call(d.contractId, 'bump', [u64(6n)], 100n);
  const late = s.call(d.contractId, 'bump', [u64(9n)]);
  const dropped = s.call(d.contractId, 'bump', [u64(11n)]);
  const gone = s.call(d.contractId, 'bump', [u64(13n)]);
  const stamp = callStampScript(Buffer.from(d.contractId, 'hex'), new Uint8Array(32).fill(7));
  const twoStamps = s.transaction([
    { script: stamp, value: 0n },
    { script: stamp, value: 0n },
  ]);
  const steps = [d.step, claimed.step, again.step, dropped.step, s.mine([d]), s.mine([claimed, twoStamps, s.conflict(gone)]), RESTART, gone.step, DEFERRED, s.mine([again]), CHECK, s.mine([late]), s.mine([s.conflict(dropped)]), RESTART, late.step];
  const input = { anchor: s.anchor, steps };
  const id = 'apply-restart-claim-and-stamp';
  return [
    {
      id,
      pins: 'after a restart, a call claiming a (caller, call_id) an executed call took before it is invalid (duplicate_call_id) in its block; a call whose outpoint a block spent before the restart, its payload sent after it, is dropped at that block by the deferred check; a call whose anchor a block held before a restart, its payload sent after it, executes at that block, and the replay from it drops again the call whose outpoint the next block spent; a transaction with two stamps in a block is no payload\'s and changes nothing',
      input,
    },
    { id: `blocks-only-${id}`, pins: `a full node deciding from the blocks it reads alone (no deferred checks: the late payload is placed by the stamp the node kept across the restart): the same statuses and roots as ${id}`, input: { ...input, deferred: false } },
  ];
}

/**
 * A late deploy: its anchor and a call of the contract mined, then the registration taken
 * and the node stopped before the replay from the anchor's block runs (stop_before_replay).
 * Started again, the node resumes the replay from the stamp its block stored for the
 * deploy, a deploy's stamp: the contract is deployed there and the call executes after it.
 */
function lateDeployStopBeforeReplay(): CaseInput[] {
  const s = new Script(2);
  const d = s.deploy(artifact());
  const c = s.call(d.contractId, 'bump', [u64(3n)]);
  return [{
    id: 'apply-late-deploy-stop-before-replay',
    pins: 'a late deploy registration taken, the node stopping before its replay runs: started again, it replays from the stamp stored as a deploy\'s, the contract deployed at its block and the call of the next block executed',
    input: { anchor: s.anchor, deferred: false, steps: [s.mine([d]), s.mine([c]), { ...d.step, stop_before_replay: true }, CHECK, c.step, CHECK] },
  }];
}

export function ledgerApplyKillArea(): Area {
  return { 'history.run': [...storageSizeCases(), ...restartCases(), ...lateDeployStopBeforeReplay()] };
}
