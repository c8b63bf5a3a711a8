/**
 * The devnet's scripted scenario: real anchoring transactions (built and signed by the
 * SDK, broadcast to the devnet chain, mined into blocks) and the node's real REST API.
 * Deploys the example token, NFT collection and marketplace; mints, transfers, lists.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSource } from '../compiler/index.js';
import { SvcClient } from '@svc-node/client/sdk';
import { walletFromSecret, type Wallet } from '@svc-node/client/wallet';
import type { CallStatus } from '@svc-node/client/node';
import { sha256, toHex } from '@svc-node/protocol/hash';
import type { DevnetChain } from './chain.js';

export interface ScenarioResult {
  token: string;
  nft: string;
  market: string;
  artifacts: Record<string, string>;
  lastTxid: string;
}

type Say = (line: string) => void;

/** The other owner of the transfer step: a fixed, public key (devnet coins only). */
const RECIPIENT_SECRET = sha256(Buffer.from('svc devnet recipient'));
/** Sats paid to the recipient's output: above every output type's dust threshold. */
const RECIPIENT_SATS = 1_000;

/** The node's state root once it has processed the devnet's tip. */
async function stateRoot(nodeUrl: string, chain: DevnetChain): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const r = (await (await fetch(`${nodeUrl}/v2/state_root`)).json()) as { height: number; state_root: string };
    if (r.height >= chain.height) return `height ${r.height}, state root ${r.state_root}`;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`the node did not reach height ${chain.height}`);
}

export async function runScenario(o: { nodeUrl: string; esploraUrl: string; chain: DevnetChain; wallet: Wallet; examplesDir: string; say: Say }): Promise<ScenarioResult> {
  const { chain, wallet, say } = o;
  const svc = new SvcClient({ nodeUrl: o.nodeUrl, esploraUrl: o.esploraUrl, wallet, feeRate: 1 });
  const artifacts: Record<string, string> = {};
  const compile = (name: string) => {
    const file = join(o.examplesDir, name);
    const r = compileSource(readFileSync(file, 'utf8'), file);
    if (!r.ok) throw new Error(`${name} does not compile`);
    artifacts[name] = file;
    return r.artifact as unknown as { abi: unknown[] } & Record<string, unknown>;
  };
  /** Mines one block and waits until the node decided the call. */
  const settle = async (label: string, txid: string): Promise<CallStatus> => {
    chain.mine(1);
    const s = await svc.node.waitForCall(txid, { intervalMs: 100, timeoutMs: 30_000 });
    const detail = s.status === 'executed' ? `result ${JSON.stringify(s.result)}` : `error ${JSON.stringify(s.error)}`;
    say(`  ${label}: ${s.status} at height ${s.block_height} (tx ${txid}), ${detail}`);
    if (s.status !== 'executed') throw new Error(`${label} ended ${s.status}`);
    return s;
  };
  // A deploy's wait failing after its broadcast ends the devnet, and its in-memory chain
  // with it: nothing to register again.
  const over = (): string => 'the devnet stops, and its in-memory chain with it';
  const call = async (label: string, contractId: string, fn: string, args: string[], abi: unknown[]): Promise<CallStatus & { txid: string }> => {
    const r = await svc.call({ contractId, function: fn, args, abi });
    say(`  ${label}: anchored in ${r.anchor.txid}, node says ${r.answer.status}`);
    return { ...(await settle(label, r.anchor.txid)), txid: r.anchor.txid };
  };

  say('1. Fund the demo wallet from the devnet faucet');
  for (let i = 0; i < 12; i++) chain.faucet(wallet.address, 5_000_000);
  chain.mine(1);
  say(`  wallet ${wallet.address} holds 12 outputs of 0.05 BTC`);

  say('2. Compile and deploy the examples (deploy stamp anchored, artifact registered)');
  const token = compile('token.svc');
  const nft = compile('nft.svc');
  const market = compile('market.svc');
  const dT = await svc.deploy(token, { retry: over });
  const dN = await svc.deploy(nft, { retry: over });
  const dM = await svc.deploy(market, { retry: over });
  chain.mine(1);
  for (const [name, d] of [['token', dT], ['nft', dN], ['market', dM]] as const) {
    say(`  ${name}: contract ${d.contractId} (deploy tx ${d.anchor.txid}, ${d.answer.status} until mined)`);
  }
  say(`  mined: ${await stateRoot(o.nodeUrl, chain)}`);

  say('3. Mint: token.init(1000000 units to output 1 of its anchoring transaction)');
  const init = await call('token.init', dT.contractId, 'init', ['u128:1000000', 'u64:1'], token.abi);
  say(`  ${await stateRoot(o.nodeUrl, chain)}`);

  say('4. Transfer: spend the outpoint holding the tokens, 250000 to another owner (output 1, paid to their address), the rest to our change (output 2)');
  const recipient = walletFromSecret(RECIPIENT_SECRET, 'p2wpkh', wallet.network);
  const tr = await svc.call({
    contractId: dT.contractId,
    function: 'transfer',
    args: ['u64:1', 'u128:250000', 'u64:2'],
    abi: token.abi,
    outpoint: { txid: init.txid, vout: 1 },
    pay: [{ address: recipient.address, value: RECIPIENT_SATS }],
  });
  say(`  token.transfer: anchored in ${tr.anchor.txid}, spending ${init.txid}:1, output 1 pays ${recipient.address}, change at output ${tr.anchor.changeVout}`);
  await settle('token.transfer', tr.anchor.txid);
  for (const [who, vout] of [['recipient', 1], ['sender change', 2]] as const) {
    const b = await svc.node.simulate(dT.contractId, { function: 'balance_at', args: [{ type: 'key', value: tr.anchor.txid }, { type: 'u64', value: String(vout) }] });
    say(`  ${who} ${tr.anchor.txid}:${vout} holds ${JSON.stringify(b.result)} units`);
  }
  say(`  ${await stateRoot(o.nodeUrl, chain)}`);

  say('5. NFT collection: init, mint token 1 to the demo key, approve the market');
  await call('nft.init', dN.contractId, 'init', ['string:Devnet Originals'], nft.abi);
  await call('nft.mint', dN.contractId, 'mint', [`key:${toHex(wallet.xOnly)}`, 'string:ipfs://devnet/1'], nft.abi);
  await call('nft.approve', dN.contractId, 'approve', ['u64:1', `key:${dM.contractId}`], nft.abi);

  say('6. Marketplace: init with the token and collection, list NFT 1 for 100000 units');
  await call('market.init', dM.contractId, 'init', [`key:${dT.contractId}`, `key:${dN.contractId}`], market.abi);
  const list = await call('market.list', dM.contractId, 'list', ['u64:1', 'u128:100000', `bytes:${toHex(wallet.outputScript)}`], market.abi);
  say(`  ${await stateRoot(o.nodeUrl, chain)}`);
  return { token: dT.contractId, nft: dN.contractId, market: dM.contractId, artifacts, lastTxid: list.txid };
}
