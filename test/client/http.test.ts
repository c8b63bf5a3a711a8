/** SvcClient against a local fake chain-data endpoint and node: what is posted, and errors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../helpers/paths.js';
import { compileFile } from '../helpers/vm.js';
import { startFake, deadUrl } from '../helpers/fake-endpoints.js';
import { Transaction } from 'bitcoinjs-lib';
import { SvcClient, walletFromSecret, networkOf, ClientError, NodeClient, EsploraClient } from '@svc-node/client';
import {
  decodePayload,
  decodeEnvelope,
  checkCallBinding,
  checkDeployBinding,
  verifyEnvelopeSignature,
  codeHash,
  contractId,
  parseHex,
  toHex,
  xOnlyPublicKey,
} from '@svc-node/protocol';

const contract = JSON.parse(readFileSync(join(fixturesDir, 'vectors', 'contract.json'), 'utf8'));
const wallet = walletFromSecret(new Uint8Array(32).fill(0x33), 'p2tr', networkOf('regtest'));
/** A deployable artifact (the vectors' artifact is not code the verifier accepts). */
const token = compileFile('examples/token.svc') as unknown as Record<string, unknown>;
const utxos = [
  { txid: 'ab'.repeat(32), vout: 1, value: 20_000, status: { confirmed: true } },
  { txid: 'cd'.repeat(32), vout: 0, value: 90_000, status: { confirmed: true } },
];

test('deploy: registers the artifact with its txid, anchor_tx and coin, then broadcasts the stamped tx as text/plain', async () => {
  const fake = await startFake({ payTo: wallet.outputScript, utxos });
  try {
    const c = new SvcClient({ nodeUrl: fake.nodeUrl, esploraUrl: fake.esploraUrl, wallet, feeRate: 2 });
    const r = await c.deploy(token);
    // read first (UTXOs, fee estimates, the node's state, in parallel), then the registration, then the broadcast
    const paths = fake.requests.map((q) => q.path);
    assert.deepEqual(paths.slice(0, 3).sort(), [`/esplora/address/${wallet.address}/utxo`, '/esplora/fee-estimates', '/node/node_status']);
    // then the coin's evidence (each spent transaction's hex and status), before anything is paid
    const coinReads = fake.requests.slice(3).findIndex((q) => q.method !== 'GET');
    assert.ok(coinReads >= 2 && fake.requests.slice(3, 3 + coinReads).every((q) => /^\/esplora\/tx\/[0-9a-f]{64}\/(hex|status)$/.test(q.path)));
    const [reg, tx] = fake.requests.slice(3 + coinReads);
    assert.equal(tx!.method, 'POST');
    assert.equal(tx!.path, '/esplora/tx');
    assert.match(tx!.contentType, /^text\/plain/);
    assert.equal(tx!.body, r.anchor.hex);
    assert.deepEqual(checkDeployBinding(tx!.body, codeHash(token as never)), { ok: true, stampVout: 0 });
    assert.equal(reg!.path, '/node/deploy_contract');
    const body = JSON.parse(reg!.body);
    assert.equal(body.txid, r.anchor.txid);
    for (const k of ['bytecode', 'abi', 'function_offsets', 'function_offset_to_locals', 'constants', 'metadata']) {
      assert.deepEqual(body[k], token[k], k);
    }
    assert.equal(body.anchor_tx, r.anchor.hex);
    assert.equal(body.coin.prev_txs.length, Transaction.fromHex(r.anchor.hex).ins.length);
    assert.equal(r.contractId, toHex(contractId(parseHex(r.anchor.txid)!, codeHash(token as never))));
    assert.equal(r.answer.status, 'pending');
  } finally {
    await fake.close();
  }
});

test('deploy: an artifact the node would refuse costs nothing (no UTXO read, no broadcast), with the node\'s code', async () => {
  const fake = await startFake({ payTo: wallet.outputScript, utxos });
  try {
    const c = new SvcClient({ nodeUrl: fake.nodeUrl, esploraUrl: fake.esploraUrl, wallet, feeRate: 2 });
    const bad = { ...token, bytecode: (token['bytecode'] as string).slice(0, -2) }; // a truncated last instruction
    await assert.rejects(c.deploy(bad), (e: ClientError) => e.code === 'invalid_bytecode' && /nothing was broadcast/.test(e.message) && /offset/.test(e.message));
    await assert.rejects(c.deploy(contract.artifact), (e: ClientError) => e.code === 'invalid_bytecode');
    await assert.rejects(c.deploy({ ...token, metadata: [] }), (e: ClientError) => e.code === 'bad_request' && /metadata must be a JSON object/.test(e.message));
    const huge = { ...token, metadata: { notes: 'x'.repeat(70_000) } };
    await assert.rejects(c.deploy(huge), (e: ClientError) => e.code === 'payload_too_large');
    assert.deepEqual(fake.requests, []);
  } finally {
    await fake.close();
  }
});

test('deploy: the node refusing the registration is heard before the broadcast (its code once, nothing broadcast); register() sends it again without paying', async () => {
  const override: Record<string, [number, unknown]> = { '/node/deploy_contract': [503, { error: { code: 'unavailable', message: 'node is catching up' } }] };
  const fake = await startFake({ payTo: wallet.outputScript, utxos, override });
  try {
    const c = new SvcClient({ nodeUrl: fake.nodeUrl, esploraUrl: fake.esploraUrl, wallet, feeRate: 2 });
    const refused = (await c.deploy(token).then(() => null, (x: unknown) => x)) as ClientError;
    assert.equal(refused.code, 'unavailable');
    assert.equal(refused.txid, undefined);
    assert.equal(refused.message, 'node is catching up (nothing was broadcast)');
    assert.equal(fake.requests.filter((q) => q.path === '/esplora/tx').length, 0, 'nothing was broadcast');
    delete override['/node/deploy_contract'];
    const paid = await c.deploy(token);
    const paths0 = fake.requests.map((q) => q.path).filter((q) => q === '/node/deploy_contract' || q === '/esplora/tx');
    assert.deepEqual(paths0, ['/node/deploy_contract', '/node/deploy_contract', '/esplora/tx'], 'registered, then broadcast');
    const broadcast = fake.requests.find((q) => q.path === '/esplora/tx')!;
    const e = { txid: paid.anchor.txid };
    const n = fake.requests.length;
    const again = await c.register(token, e.txid);
    assert.equal(again.contractId, toHex(contractId(parseHex(e.txid)!, codeHash(token as never))));
    const paths = fake.requests.slice(n).map((q) => q.path);
    assert.equal(paths[0], `/esplora/tx/${e.txid}/hex`, 'register reads the anchor');
    assert.equal(paths.at(-1), '/node/deploy_contract', 'and posts the registration');
    assert.ok(paths.slice(1, -1).every((q) => /^\/esplora\/tx\/[0-9a-f]{64}\/(hex|status)$/.test(q)), 'with its coin read between, nothing broadcast');
    assert.equal(JSON.parse(fake.requests.at(-1)!.body).anchor_tx, broadcast.body);
    // a transaction that is not the txid's, or carries no stamp of this artifact, is refused before anything is posted
    const posted = fake.requests.length;
    await assert.rejects(c.register(token, 'ab'.repeat(32), { anchorTx: broadcast.body }), (x: ClientError) => x.code === 'bad_request' && x.message.endsWith(`the anchoring transaction given is ${e.txid}, not ${'ab'.repeat(32)}`));
    const unstamped = broadcast.body.replace('6a24535643', '6a24535644'); // "SVD": no stamp
    await assert.rejects(c.register(token, Transaction.fromHex(unstamped).getId(), { anchorTx: unstamped }), (x: ClientError) => x.code === 'anchor_mismatch' && /nothing was broadcast\): transaction [0-9a-f]{64} does not anchor this artifact/.test(x.message));
    assert.equal(fake.requests.length, posted);
  } finally {
    await fake.close();
  }
});

test('call: falls back to the given ABI, anchors on the largest UTXO, submits the payload, polls to executed', async () => {
  const fake = await startFake({ payTo: wallet.outputScript, utxos, abi: null, statuses: ['pending', 'pending', 'executed'] });
  try {
    const caller = new Uint8Array(32).fill(0x44);
    const c = new SvcClient({ nodeUrl: fake.nodeUrl, esploraUrl: fake.esploraUrl, wallet, callerSecret: caller });
    const abi = await c.abiFor(contract.contract_id, contract.artifact.abi);
    assert.deepEqual(abi, contract.artifact.abi);
    const seen: string[] = [];
    const r = await c.call({
      contractId: contract.contract_id,
      function: 'transfer',
      args: ['key:' + '01'.repeat(32), 'u64:5'],
      abi,
      wait: { intervalMs: 10, timeoutMs: 5_000, onStatus: (s) => seen.push(s.status) },
    });
    assert.deepEqual(seen, ['pending', 'pending', 'executed']);
    assert.equal(r.status?.status, 'executed');
    const posted = fake.requests.find((q) => q.path === '/esplora/tx')!;
    const submit = fake.requests.find((q) => q.path === '/node/contract_call')!;
    assert.ok(fake.requests.indexOf(submit) < fake.requests.indexOf(posted), 'submitted before the broadcast');
    const body = JSON.parse(submit.body);
    assert.deepEqual(Object.keys(body).sort(), ['anchor_tx', 'coin', 'contract_id', 'payload', 'txid']);
    assert.equal(body.anchor_tx, posted.body);
    assert.equal(body.contract_id, contract.contract_id);
    assert.equal(body.txid, r.anchor.txid);
    const e = decodeEnvelope(decodePayload(body.payload));
    assert.ok(verifyEnvelopeSignature(e));
    assert.deepEqual(e.caller, xOnlyPublicKey(caller));
    assert.equal(toHex(e.outpointTxid), fake.utxos[1]!.txid); // the largest confirmed UTXO
    assert.deepEqual(checkCallBinding(posted.body, e), { ok: true, stampVout: 0 });
  } finally {
    await fake.close();
  }
});

test('node errors keep their code and status; chain errors and dead endpoints are one-line ClientErrors', async () => {
  const fake = await startFake({
    payTo: wallet.outputScript,
    utxos,
    override: { '/node/contract_call': [422, { error: { code: 'anchor_mismatch', message: 'the anchoring transaction carries no SVC stamp' } }] },
  });
  try {
    const node = new NodeClient(fake.nodeUrl);
    await assert.rejects(node.submitCall({ txid: 'a'.repeat(64), contract_id: 'b'.repeat(64), payload: 'AA==' }), (e: unknown) => {
      return e instanceof ClientError && e.code === 'anchor_mismatch' && e.status === 422 && /no SVC stamp/.test(e.message);
    });
    await assert.rejects(new EsploraClient(fake.esploraUrl).broadcast('00'), (e: unknown) => {
      return e instanceof ClientError && e.code === 'chain_error' && e.status === 400 && !e.message.includes('\n');
    });
    assert.equal(await node.abi('c'.repeat(64)), null);
  } finally {
    await fake.close();
  }
  const dead = await deadUrl();
  await assert.rejects(new NodeClient(dead).callStatus('a'.repeat(64)), (e: unknown) => {
    return e instanceof ClientError && e.code === 'unreachable' && /node unreachable at http:\/\/127\.0\.0\.1:\d+.*ECONNREFUSED/.test(e.message);
  });
  await assert.rejects(new EsploraClient(dead).utxos('x'), (e: unknown) => e instanceof ClientError && e.code === 'unreachable');
});

test('reads and events use the PROTOCOL section 6 paths and query names', async () => {
  const fake = await startFake();
  try {
    const node = new NodeClient(fake.nodeUrl);
    const f = await node.readField('c'.repeat(64), 'balances', 'ab'.repeat(32));
    assert.equal(f.key, 'ab'.repeat(32));
    await node.events('c'.repeat(64), { name: 'Transfer', from: 1, to: 9, limit: 10 });
    assert.equal(fake.requests.at(-1)!.path, `/node/events/${'c'.repeat(64)}?event_name=Transfer&from_block=1&to_block=9&limit=10`);
  } finally {
    await fake.close();
  }
});
