/**
 * What intake answers for a payload that is not a signed version-1 envelope (PROTOCOL.md
 * section 3; docs/STATE.md): a call whose signature does not verify under its caller is
 * refused bad_signature, and one whose version byte is not 1 is refused bad_request, even
 * when its signature verifies over the bytes sent and its anchor binds them. Neither is
 * held; the node's state does not change. A history with no block: the arrivals are the
 * answer. Real signed anchors (P2WPKH) of funded devnet coins, stamping each payload.
 */
import { DevnetChain } from '../../src/devnet/chain.js';
import { callStampScript } from '@svc-node/protocol/stamp';
import { encodeEnvelope, envelopeHash } from '@svc-node/protocol/envelope';
import { Tags, taggedHash } from '@svc-node/protocol/hash';
import { signSchnorr } from '@svc-node/protocol/schnorr';
import { spend, wallet, type Utxo } from '../../test/helpers/txbuilder.js';
import { hex, type CaseInput } from './kit.js';
import { CALLER_SECRET, envelope, seeded } from './keys.js';

const payer = wallet('conformance intake payer');

export function intakeRefusalHistoryCases(): CaseInput[] {
  const chain = new DevnetChain();
  chain.mine(101);
  const coins: Utxo[] = [0, 1].map(() => ({ ...chain.faucet(payer.address, 100_000), value: 100_000n }));
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
  // Version 2, signed over its own body (the signing message is the tagged hash of the body bytes as sent).
  const v2 = encodeEnvelope(named(coins[1]!));
  v2[0] = 2;
  v2.set(signSchnorr(taggedHash(Tags.call, v2.subarray(0, v2.length - 64)), CALLER_SECRET, new Uint8Array(32)), v2.length - 64);
  return [{
    id: 'arrivals-bad-signature-and-version',
    pins: 'intake refuses a call whose signature does not verify (bad_signature) and one of envelope version 2 whose signature verifies over its bytes (bad_request); neither is held',
    input: { anchor: { height: tip.height, hash: tip.hash }, steps: [callStep(coins[0]!, badSig), callStep(coins[1]!, v2), { kind: 'check' }] },
  }];
}
