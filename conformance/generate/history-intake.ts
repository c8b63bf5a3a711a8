/**
 * What intake answers for a payload that is not a signed version-1 envelope (PROTOCOL.md
 * section 3; docs/STATE.md): a call whose signature does not verify under its caller is
 * refused bad_signature, and one whose version byte is not 1 is refused bad_request, even
 * when its signature verifies over the bytes sent and its anchor binds them, as is one
 * whose function name is not UTF-8 (its signature verifies over the bytes sent: intake
 * hashes them as received, so only the decoder refuses it). None is held; the node's
 * state does not change. A history with no block: the arrivals are the
 * answer. Real signed anchors (P2WPKH) of funded devnet coins, stamping each payload.
 */
import { DevnetChain } from '../../src/devnet/chain.js';
import { callStampScript } from '@svc-node/protocol/stamp';
import { encodeEnvelope, envelopeHash } from '@svc-node/protocol/envelope';
import { Tags, taggedHash } from '@svc-node/protocol/hash';
import { signSchnorr } from '@svc-node/protocol/schnorr';
import { spend, wallet, type Utxo } from '../../test/helpers/txbuilder.js';
import { hex, type CaseInput } from './kit.js';
import { artifact, CHECK, Script } from './history.js';
import { CALLER_SECRET, envelope, seeded } from './keys.js';

const payer = wallet('conformance intake payer');

export function intakeRefusalHistoryCases(): CaseInput[] {
  const chain = new DevnetChain();
  chain.mine(101);
  const coins: Utxo[] = [0, 1, 2].map(() => ({ ...chain.faucet(payer.address, 100_000), value: 100_000n }));
  chain.mine(1);
  const tip = chain.blockAt(chain.height)!;
  const contractId = seeded('conformance intake contract');
  /** A call step for `bytes` (an envelope naming `coin`), anchored by a transaction spending `coin` and stamping those bytes. */
  const callStep = (coin: Utxo, bytes: Uint8Array) => {
    const tx = spend(payer, [coin], [{ script: payer.script, value: coin.value - 1_000n }, { script: callStampScript(contractId, envelopeHash(bytes)), value: 0n }]);
    return { kind: 'call', txid: tx.getId(), anchor_tx: tx.toHex(), payload: hex(bytes) };
  };
  const named = (coin: Utxo) => envelope({ contractId, function: 'bump', args: [], outpointTxid: Buffer.from(coin.txid, 'hex'), outpointVout: coin.vout });
  // A signature byte changed: the signature no longer verifies.
  const badSig = encodeEnvelope(named(coins[0]!));
  badSig[badSig.length - 1]! ^= 1;
  /** `bytes` signed again over their own body (the signing message is the tagged hash of the body bytes as sent). */
  const resigned = (bytes: Uint8Array): Uint8Array => {
    bytes.set(signSchnorr(taggedHash(Tags.call, bytes.subarray(0, bytes.length - 64)), CALLER_SECRET, new Uint8Array(32)), bytes.length - 64);
    return bytes;
  };
  const v2 = encodeEnvelope(named(coins[1]!));
  v2[0] = 2;
  // The function name's first byte (after version, contract id and the name's u32 length) made 0xff: "bump" is no longer UTF-8.
  const notUtf8 = encodeEnvelope(named(coins[2]!));
  notUtf8[1 + 32 + 4] = 0xff;
  return [{
    id: 'arrivals-bad-signature-and-version',
    pins: 'intake refuses a call whose signature does not verify (bad_signature), one of envelope version 2 whose signature verifies over its bytes (bad_request) and one whose function name is not UTF-8, signed over its bytes (bad_request); none is held',
    input: { anchor: { height: tip.height, hash: tip.hash }, steps: [callStep(coins[0]!, badSig), callStep(coins[1]!, resigned(v2)), callStep(coins[2]!, resigned(notUtf8)), { kind: 'check' }] },
  }];
}

/**
 * A deploy whose bytecode the verifier refuses (an unknown opcode after the FUNC header),
 * anchored by a transaction whose stamp carries that artifact's code hash: intake refuses it
 * invalid_bytecode and holds nothing, so a later call naming the contract is unknown_contract.
 */
export function invalidBytecodeHistoryCases(): CaseInput[] {
  const s = new Script(2);
  const good = artifact();
  const code = Buffer.from(good.bytecode as string, 'hex');
  code[5] = 0xee; // the first instruction after main's 5-byte FUNC header: no opcode 0xee exists
  const bad = s.deploy({ ...good, bytecode: code.toString('hex') });
  const call = s.call(bad.contractId, 'bump', [{ type: 'u64', value: 1n }]);
  return [{
    id: 'arrivals-invalid-bytecode',
    pins: 'intake refuses a deploy whose bytecode the verifier refuses (invalid_bytecode) though its anchor stamps its code hash; it is not held, so a call naming its contract is refused unknown_contract',
    input: { anchor: s.anchor, steps: [bad.step, call.step, s.mine([bad, call]), CHECK] },
  }];
}
