/**
 * The SDK's typed answers are the node's documented ones: every REST operation of
 * docs/openapi.yaml (but the live feed's upgrade, test/rest/stream/) has a NodeClient
 * method, each answer those methods read from a real node matches its operation's schema,
 * and each answer type lists exactly its schema's top-level properties (the key lists
 * below fail to compile when the type and the list differ, and the test fails when the
 * list and the schema do).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { DevnetChainHandle } from '../../src/devnet/chain-server.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { NodeClient, SvcClient, type AbiAnswer, type CallAnswer, type CallsPage, type ClearHaltAnswer, type ContractInfoAnswer, type ContractsAnswer, type DeployAnswer, type EventsAnswer, type HealthAnswer, type NodeStatusAnswer, type ProvenCallStatus, type ProvenFieldAnswer, type Readiness, type SimulateAnswer, type StateRootAnswer } from '@svc-node/client';
import { compileFixture, fund, startDevnet, startDevnetNode, testWallet, waitSynced } from '../helpers/devnet-node.js';
import { SpecChecker, recordAnswers } from '../helpers/openapi-check.js';

const TOKEN = 'answers-test-token-0123456789abcdef';
let devnet: DevnetChainHandle;
let node: NodeProcess;
let checker: SpecChecker;
const wallet = testWallet(31);

before(async () => {
  devnet = await startDevnet();
  node = await startDevnetNode(devnet, { env: { SVC_API_TOKEN: TOKEN } });
  await fund(devnet, wallet, 4);
  await waitSynced(node, devnet);
  checker = new SpecChecker();
});

after(async () => {
  await node?.stop();
  await devnet?.close();
});

/** `keys` of T, all of them and no other: a list that misses one, or names one T lacks, does not compile. */
function keysOf<T>() {
  return <const K extends readonly (keyof T)[]>(k: K & (Exclude<keyof T, K[number]> extends never ? unknown : { missing: Exclude<keyof T, K[number]> })): readonly string[] => k as readonly string[];
}

const TYPED: [string, number, readonly string[]][] = [
  ['GET /health', 200, keysOf<HealthAnswer>()(['status'])],
  ['GET /ready', 200, keysOf<Readiness>()(['status', 'checks', 'error'])],
  ['GET /node_status', 200, keysOf<NodeStatusAnswer>()(['node_id', 'version', 'tip_height', 'processed_height', 'state_root', 'halted', 'halt_reason', 'peers', 'pending_calls', 'pending_evicted', 'contracts', 'unproven_pool', 'gossip_public_key', 'caught_up', 'lag_blocks', 'pool', 'chain', 'last_block_processed_at', 'uptime_s', 'read_cache', 'gossip', 'divergence'])],
  ['POST /deploy_contract', 202, keysOf<DeployAnswer>()(['contract_id', 'txid', 'code_hash', 'status'])],
  ['POST /contract_call', 202, keysOf<CallAnswer>()(['txid', 'contract_id', 'envelope_hash', 'status'])],
  ['GET /contract_call/{txid}/status', 200, keysOf<ProvenCallStatus>()(['txid', 'contract_id', 'envelope_hash', 'function', 'caller', 'call_id', 'status', 'block_height', 'tx_index', 'result', 'error', 'confirmations', 'proof'])],
  ['GET /contracts', 200, keysOf<ContractsAnswer>()(['contract_ids'])],
  ['GET /contracts/{contract_id}', 200, keysOf<ContractInfoAnswer>()(['contract_id', 'txid', 'code_hash', 'status', 'block_height', 'tx_index', 'abi', 'metadata'])],
  ['GET /contracts/{contract_id}/abi', 200, keysOf<AbiAnswer>()(['contract_id', 'abi'])],
  ['GET /v2/state_root', 200, keysOf<StateRootAnswer>()(['height', 'block_hash', 'state_root'])],
  ['GET /v2/state_root/{height}', 200, keysOf<StateRootAnswer>()(['height', 'block_hash', 'state_root'])],
  ['GET /v2/{contract_id}/{field}', 200, keysOf<ProvenFieldAnswer>()(['contract_id', 'field', 'key', 'value', 'exists', 'height', 'state_root', 'block_hash', 'proof'])],
  ['GET /v2/{contract_id}/{field}/{arg}', 200, keysOf<ProvenFieldAnswer>()(['contract_id', 'field', 'key', 'value', 'exists', 'height', 'state_root', 'block_hash', 'proof'])],
  ['POST /v2/{contract_id}/simulate', 200, keysOf<SimulateAnswer>()(['contract_id', 'function', 'height', 'state_root', 'status', 'result', 'error', 'events', 'instructions'])],
  ['GET /events/{contract_id}', 200, keysOf<EventsAnswer>()(['contract_id', 'events', 'next_offset', 'next_cursor', 'rollback'])],
  ['GET /calls/{contract_id}', 200, keysOf<CallsPage>()(['contract_id', 'total', 'limit', 'offset', 'calls'])],
  ['POST /admin/clear_halt', 200, keysOf<ClearHaltAnswer>()(['halted'])],
];

test('each answer type has exactly its schema\'s top-level properties', () => {
  for (const [op, status, keys] of TYPED) {
    const schema = checker.responseSchema(op, status);
    assert.ok(schema?.properties, `${op} ${status}: no JSON schema with properties in docs/openapi.yaml`);
    assert.deepEqual([...keys].sort(), Object.keys(schema.properties).sort(), `${op} ${status}`);
  }
});

test('every documented operation has a NodeClient method, and what each reads from a real node matches the spec', async () => {
  const rec = recordAnswers(() => node.restUrl);
  try {
    const nc = new NodeClient(node.restUrl, rec.http);
    const svc = new SvcClient({ nodeUrl: node.restUrl, esploraUrl: devnet.url, wallet, feeRate: 1, http: rec.http });
    const artifact = compileFixture('counter.svc');
    const { contractId } = await svc.deploy(artifact);
    devnet.chain.mine(1);
    await waitSynced(node, devnet);
    const call = await svc.call({ contractId, function: 'bump', args: ['u64:5'], abi: artifact.abi });
    assert.equal((await nc.submitCall(call.body)).status, 'pending', 'the same body again: 200, same answer');
    devnet.chain.mine(1);
    const { height } = await waitSynced(node, devnet);
    const me = Buffer.from(wallet.xOnly).toString('hex');
    await Promise.all([
      nc.health(),
      nc.ready(),
      nc.nodeStatus(),
      nc.metrics(),
      nc.contracts(),
      nc.contractInfo(contractId),
      nc.contractAbi(contractId),
      nc.stateRoot(),
      nc.stateRoot(height),
      nc.readField(contractId, 'count'),
      nc.readFieldProven(contractId, 'by_caller', me, { abi: artifact.abi }),
      nc.callStatus(call.anchor.txid),
      nc.callStatusProven(call.anchor.txid, { network: 'regtest' }),
      nc.simulate(contractId, { function: 'get', args: [] }),
      nc.events(contractId, { limit: 10 }),
      nc.calls(contractId, { limit: 10 }, TOKEN),
      nc.clearHalt(TOKEN),
    ]);
  } finally {
    rec.restore();
  }
  const problems = rec.answers.flatMap((a) => checker.check(a));
  assert.deepEqual(problems, []);
  const ok = (op: string): boolean => [...(checker.seen.get(op) ?? [])].some((s) => s >= 200 && s < 300);
  const missing = checker.operations.filter((op) => op !== 'GET /v2/stream' && !ok(op));
  assert.deepEqual(missing, [], 'operations no NodeClient method read a 2xx of');
});
