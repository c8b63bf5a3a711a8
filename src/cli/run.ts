/**
 * The svc commands (entry: src/cli/svc.ts). Kept apart from the entry so tests can run
 * commands in-process; the entry only prints and sets the exit code.
 */
import { parseArgs } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
// Light modules only at start-up: usage errors and node reads answer without loading
// bitcoinjs-lib, the WASM verifier and noble (~0.25 s); deploy, call and keygen load them.
import { ClientError } from '@svc-node/client/errors';
import { NodeClient, type CallBody, type CallStatus, type ContractInfoAnswer, type ProofNetwork, type VerifiedCall } from '@svc-node/client/node';
import { findField, findFunction, encodeFieldArg, splitTyped, argsFromText } from '@svc-node/client/abi';
import { DevnetControl } from '../devnet/control-client.js';
import { typedValueToJson } from '@svc-node/protocol/value';
import { toHex } from '@svc-node/protocol/hash';
import { NodeError } from '@svc-node/protocol/errors';
import { HEX32 } from '@svc-node/protocol/identifiers';

const DEFAULT_FEE_RATE = 2; // keep equal to sdk.ts DEFAULT_FEE_RATE (not imported: see above)

const sdk = () => import('@svc-node/client');
const schnorrLib = () => import('@svc-node/protocol/schnorr');

const USAGE = `usage: svc <command> [options]

commands:
  keygen                                  new secret key, caller (x-only) key and addresses
  deploy ARTIFACT.json                    check the artifact as the node will (nothing spent if
                                          refused), anchor the deploy stamp, register with the node
  call CONTRACT FUNCTION [ARG...]         sign, anchor and submit a call (ARG as TYPE:VALUE,
                                          e.g. u64:5 i64:-3 bool:true string:hello bytes:beef key:<64 hex>)
  simulate CONTRACT FUNCTION [ARG...]     run a call against the node's state without anchoring
                                          (readonly reads and dry runs; nothing is spent or stored)
  submit CALL.json                        post a saved call submission again (after an interrupt;
                                          nothing is broadcast or paid)
  status TXID                             status of a call (--proof: verified against its proof)
  contract CONTRACT                       status of a deploy (pending, then active) and its position
  read CONTRACT FIELD [ARG]               read a contract field (ARG: the map key)
  events CONTRACT                         list events (--follow: then stream new ones, reorg-aware)
  devnet fund [ADDRESS] [SATS]            devnet faucet: pay ADDRESS (default: the wallet) SATS
                                          (default 5000000) and mine a block (--esplora is the devnet)
  devnet mine [N]                         devnet: mine N blocks (default 1)
  codegen ARTIFACT.json                   write a TypeScript module typing the contract's calls, simulations
                                          and field reads (--out FILE, default stdout; --import SDK;
                                          --name NAME; docs/CLI.md)
  test CONTRACT.svc [TESTS]               compile and run the contract's tests in the VM, no chain
                                          (TESTS default: CONTRACT.tests; format in docs/CLI.md)
  sink postgres --contract ID | --all     write contract history into PostgreSQL, reorg-safe and
                                          exactly once (svc sink --help; docs/INDEXING.md)

options:
  --node URL          node REST URL (env SVC_NODE_URL, default http://127.0.0.1:8080)
  --esplora URL       chain-data (Esplora) URL (env SVC_ESPLORA_URL)
  --wallet-key KEY    [p2wpkh:|p2tr:]<64 hex or WIF> paying for anchors (env SVC_WALLET_KEY)
  --caller-key KEY    <64 hex or WIF> signing call envelopes (env SVC_CALLER_KEY; default: wallet key)
  --network NAME      regtest | testnet | signet | bitcoin (env SVC_NETWORK, default regtest)
  --fee-rate N        sat/vB for anchoring transactions (env SVC_FEE_RATE, default ${DEFAULT_FEE_RATE})
  --allow-high-fee    deploy/call: pay a fee rate above 3x the endpoint's next-block estimate
                      (at least 25 sat/vB; 200 without estimates) or a fee above 100000 sats
  --abi FILE          artifact JSON whose ABI is used when the node does not serve it
  --call-id N         u64 call id (default random)
  --pay ADDRESS:SATS  call/simulate: add an output paying ADDRESS (repeatable); the i-th --pay
                      is vout i of the anchoring transaction (vout 0 is the stamp, change comes
                      last), so a contract argument can name it (e.g. transfer(1, ..., 2))
  --outpoint TXID:VOUT  call: the wallet UTXO the call names and spends first (e.g. the outpoint
                      holding a token balance; default: the wallet's largest confirmed UTXO)
  --force             call: anchor a call of a readonly function (it changes nothing; by
                      default svc refuses and points to svc simulate)
  --txid TXID         deploy: register an artifact whose deploy stamp TXID is already broadcast
                      (retry after a failed registration; spends nothing)
  --caller KEY        simulate: caller x-only key, 64 hex (default: the caller or wallet key's)
  --input TXID:VOUT   simulate: an input of the simulated anchoring transaction (repeatable)
  --proof             status: ask for the call's proof and verify it before printing: the anchor
                      in a block with the network's proof of work, the outcome committed by that
                      block's state root (printed: compare it with other nodes' GET /v2/state_root)
  --wait              deploy: poll until active; call/status/submit: until executed, failed, invalid
                      or dropped; gives up when the node's chain-data endpoint keeps failing
  --timeout S         --wait gives up after S seconds (default 1800)
  --interval S        --wait polls every S seconds (default 2)
  --name N --from H --to H --limit L --offset O   events filters
  --follow            events: stream from --from H or --cursor C (default height 0) and keep
                      following; reconnects and resumes by itself; a reorg prints a rollback line
  --cursor C          events --follow: start after this cursor (GET /events next_cursor)
  --json              machine-readable output (errors too, on stderr)
  -h, --help`;

const OPTIONS = {
  node: { type: 'string' },
  esplora: { type: 'string' },
  'wallet-key': { type: 'string' },
  'caller-key': { type: 'string' },
  network: { type: 'string' },
  'fee-rate': { type: 'string' },
  'allow-high-fee': { type: 'boolean' },
  abi: { type: 'string' },
  'call-id': { type: 'string' },
  pay: { type: 'string', multiple: true },
  txid: { type: 'string' },
  caller: { type: 'string' },
  input: { type: 'string', multiple: true },
  outpoint: { type: 'string' },
  force: { type: 'boolean' },
  wait: { type: 'boolean' },
  proof: { type: 'boolean' },
  timeout: { type: 'string' },
  interval: { type: 'string' },
  name: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  follow: { type: 'boolean' },
  out: { type: 'string' },
  import: { type: 'string' },
  cursor: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Flags = {
  -readonly [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[] : (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string;
} & {
  /** --fee-rate came from SVC_FEE_RATE (its errors name the variable). */
  feeRateFromEnv?: boolean;
};

const USAGE_CODES = new Set(['bad_argument', 'bad_key', 'unknown_function', 'fee_too_high']);

function usage(message: string): ClientError {
  return new ClientError('bad_argument', message);
}

function nodeUrl(f: Flags): string {
  return f.node ?? 'http://127.0.0.1:8080';
}

function esploraUrl(f: Flags): string {
  const u = f.esplora;
  if (!u) throw usage('no chain-data URL: pass --esplora URL or set SVC_ESPLORA_URL');
  return u;
}

function checkUrl(u: string, what: string): string {
  try {
    const p = new URL(u);
    if (p.protocol !== 'http:' && p.protocol !== 'https:') throw new Error();
  } catch {
    throw usage(`${what} URL is not an http(s) URL: "${u}"`);
  }
  return u;
}

function num(text: string | undefined, flag: string, o: { int?: boolean; min?: number; positive?: boolean } = {}): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (
    text.trim() === '' ||
    !Number.isFinite(n) ||
    (o.int && !Number.isSafeInteger(n)) ||
    (o.min !== undefined && n < o.min) ||
    (o.positive && !(n > 0))
  ) {
    const bound = o.positive ? ' > 0' : o.min !== undefined ? ` >= ${o.min}` : '';
    throw usage(`${flag.startsWith('SVC_') ? flag : `--${flag}`} must be a ${o.int ? 'whole ' : ''}number${bound}, got "${text}"`);
  }
  return n;
}

function readJsonFile(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw usage(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    if (/^\s*(?:(?:\/\/[^\n]*|\/\*[\s\S]*?\*\/)\s*)*(?:const|contract)\s/.test(text) || path.endsWith('.svc')) {
      const out = basename(path).replace(/\.svc$/, '') + '.json';
      throw usage(`${what} ${path} is contract source, not a compiled artifact: compile it first (compile ${path} -o ${out}) and pass ${out}`);
    }
    throw usage(`${what} ${path} is not valid JSON`);
  }
}

function abiFromFile(path: string): unknown[] {
  const j = readJsonFile(path, 'ABI file') as { abi?: unknown };
  const abi = Array.isArray(j) ? j : j?.abi;
  if (!Array.isArray(abi)) throw usage(`ABI file ${path} has no "abi" array`);
  return abi;
}

function hex64(text: string | undefined, what: string): string {
  if (text === undefined) throw usage(`missing ${what}`);
  const t = text.toLowerCase();
  if (!HEX32.test(t)) throw usage(`${what} must be 64 hex characters, got "${text}"`);
  return t;
}

async function wallet(f: Flags) {
  const { networkOf, parseWalletKey } = await sdk();
  const net = networkOf(f.network ?? 'regtest');
  const key = f['wallet-key'];
  if (!key) throw new ClientError('bad_key', 'no wallet key: pass --wallet-key KEY or set SVC_WALLET_KEY');
  return parseWalletKey(key, net);
}

/**
 * A wait for the chain-data endpoint's 429 (packages/client/src/esplora.ts), said on stderr before
 * it starts: a line, or with --json an object `{"wait": {...}}`.
 */
function sayWait(f: Flags) {
  return {
    onWait: (line: string, w: { status: number; path: string; seconds: number }) =>
      void process.stderr.write(f.json ? `${JSON.stringify({ wait: { code: 'rate_limited', message: line, seconds: w.seconds } })}\n` : `svc: ${line}\n`),
  };
}

/**
 * What the running deploy or call has broadcast, for svc.ts to name when interrupted:
 * null before POST /tx (and after a refused one), then the txid, whether the endpoint took
 * it yet, the call's submission and what to do next.
 */
let broadcast: { txid: string; state: 'sending' | 'sent'; submission?: CallBody; next: string } | null = null;
/** The running command broadcasts (deploy without --txid, call). */
let broadcasting = false;

/**
 * What svc.ts prints when the command is interrupted (SIGINT): for deploy and call, whether
 * anything was broadcast (the node takes a submission before its anchor is broadcast),
 * and once a broadcast may have started its txid, the call's submission (saved to a file)
 * and what to do next, so nothing paid is lost and nothing is paid twice. null for the other commands.
 */
export function interruptReport(): { json: Record<string, unknown>; text: string[] } | null {
  if (!broadcasting) return null;
  const b = broadcast;
  if (!b) return { json: { interrupted: true, broadcast: false }, text: ['interrupted: nothing was broadcast'] };
  const file = b.submission ? saveSubmission(b.submission) : null;
  const sent = b.state === 'sent';
  const text = [
    sent
      ? `interrupted after the broadcast: anchoring transaction ${b.txid} is broadcast (its fee is spent); do not run the command again, it would pay again`
      : `interrupted while broadcasting: anchoring transaction ${b.txid} may be broadcast; look it up (GET /tx/${b.txid} on the chain-data endpoint) before paying again`,
    `txid: ${b.txid}`,
    `next: ${b.next}`,
  ];
  if (file) text.push(`submission: ${file} (if the node does not know the call, svc submit ${file} sends it again, paying nothing)`);
  return { json: { interrupted: true, broadcast: sent ? true : 'unknown', txid: b.txid, next: b.next, ...(file ? { submission: file } : {}) }, text };
}

async function client(f: Flags, next?: (txid: string) => string) {
  const { SvcClient, parseSecret } = await sdk();
  const w = await wallet(f);
  const callerText = f['caller-key'];
  return new SvcClient({
    http: sayWait(f),
    onBroadcast: next
      ? (txid, state, submission) => {
          broadcast = state === 'refused' ? null : { txid, state, submission, next: next(txid) };
        }
      : undefined,
    nodeUrl: checkUrl(nodeUrl(f), 'node'),
    esploraUrl: checkUrl(esploraUrl(f), 'chain-data'),
    wallet: w,
    callerSecret: callerText ? parseSecret(callerText, 'caller key') : undefined,
    // named as the user gave it: the flag, or the variable it came from
    feeRate: num(f['fee-rate'], f.feeRateFromEnv ? 'SVC_FEE_RATE' : 'fee-rate', { positive: true }),
    allowHighFee: !!f['allow-high-fee'],
  });
}

/**
 * Saves the submission of a call interrupted once its anchor may be broadcast, for
 * `svc submit` should the node not know it: in the current directory, else the temporary
 * one. Answers the path.
 */
function saveSubmission(body: CallBody): string {
  const name = `svc-call-${body.txid}.json`;
  for (const dir of ['.', tmpdir()]) {
    const path = dir === '.' ? name : join(dir, name);
    try {
      writeFileSync(path, JSON.stringify(body) + '\n', { flag: 'w' });
      return path;
    } catch {
      /* not writable: try the next place */
    }
  }
  return '(could not be saved)';
}

/** `streamed`: the output was already written line by line (events --follow). */
export type Out = { json: unknown; text: string[]; exit?: number; streamed?: boolean };

/** Where a streaming command writes and what stops it (svc.ts: stdout and SIGINT). */
export interface StreamIo {
  write: (line: string) => void;
  signal?: AbortSignal;
}

/** `--pay ADDRESS:SATS` flags (the address is checked against the network when the transaction is built). */
function payments(f: Flags): { address: string; value: number }[] {
  return (f.pay ?? []).map((p) => {
    const m = /^([^:\s]+):([1-9][0-9]{0,15})$/.exec(p);
    if (!m) throw usage(`--pay must be ADDRESS:SATS with SATS a whole number > 0, got "${p}"`);
    return { address: m[1]!, value: Number(m[2]) };
  });
}

/** TXID:VOUT of --input / --outpoint. */
function outpointFlag(text: string, flag: string): { txid: string; vout: number } {
  const m = /^([0-9a-fA-F]{64}):(0|[1-9][0-9]{0,9})$/.exec(text);
  if (!m || Number(m[2]) > 0xffffffff) throw usage(`${flag} must be TXID:VOUT, got "${text}"`);
  return { txid: m[1]!.toLowerCase(), vout: Number(m[2]) };
}

function contractLines(c: ContractInfoAnswer): string[] {
  const lines = [`contract: ${c.contract_id}`, `status: ${c.status}`, `deploy txid: ${c.txid}`, `code hash: ${c.code_hash}`];
  if (c.block_height !== null && c.block_height !== undefined) lines.push(`block: ${c.block_height} (tx index ${c.tx_index})`);
  return lines;
}

/** On a devnet (its chain-data endpoint answers /devnet/info), how to fund the wallet. */
async function devnetFundingHint(f: Flags): Promise<string | null> {
  if (!f.esplora) return null;
  const info = await new DevnetControl(f.esplora, { timeoutMs: 2_000 }).info().catch(() => null);
  return info ? ' (this is a devnet: fund the wallet with `svc devnet fund`)' : null;
}

function statusLines(s: CallStatus): string[] {
  const lines = [`status: ${s.status}`, `txid: ${s.txid}`, `contract: ${s.contract_id}`, `function: ${s.function}`];
  if (s.block_height !== null && s.block_height !== undefined) lines.push(`block: ${s.block_height} (tx index ${s.tx_index})`);
  if (s.result !== null && s.result !== undefined) lines.push(`result: ${JSON.stringify(s.result)}`);
  if (s.error) lines.push(`error: ${s.error.code}: ${s.error.message}`);
  return lines;
}

/** What `svc status --proof` verified (packages/client/src/node.ts, VerifiedCall). */
function provenLines(v: VerifiedCall): string[] {
  const lines = ['proof: verified'];
  if (v.confirmed) lines.push(`anchor: block ${v.confirmed.blockHash} at ${v.confirmed.height}, tx index ${v.confirmed.txIndex}`);
  if (v.spentBy) lines.push(`spent by: ${v.spentBy.txid} in block ${v.spentBy.blockHash} at ${v.spentBy.height}`);
  if (v.outcome) {
    // A drop is committed by no root: the spend above is its proof.
    if (v.outcome.stateRoot !== null) lines.push(`outcome committed by: state root ${v.outcome.stateRoot} of block ${v.outcome.height}`);
    for (const e of v.outcome.events) lines.push(`event: ${e.name}(${e.params.map((x) => JSON.stringify(x.value)).join(', ')})`);
  }
  return lines;
}

function waitOptions<T>(f: Flags, json: boolean, statusOf: (t: T) => string) {
  const timeout = num(f.timeout, 'timeout', { min: 1 });
  const interval = num(f.interval, 'interval', { min: 0.01 });
  return {
    timeoutMs: timeout === undefined ? undefined : timeout * 1000,
    intervalMs: interval === undefined ? undefined : interval * 1000,
    onStatus: json ? undefined : (s: T) => process.stderr.write(`... ${statusOf(s)}\n`),
  };
}

/** Sats `svc devnet fund` pays when no amount is given: enough for hundreds of anchors. */
const DEVNET_FUND_SATS = 5_000_000;

/** The caller key of a simulation when --caller is not given: the caller key's, else the wallet key's, else none. */
async function defaultCaller(f: Flags): Promise<string | null> {
  const text = f['caller-key'] ?? f['wallet-key'];
  if (!text) return null;
  if (f['caller-key']) {
    const { parseSecret } = await sdk();
    const { xOnlyPublicKey } = await schnorrLib();
    return toHex(xOnlyPublicKey(parseSecret(text, 'caller key')));
  }
  return toHex((await wallet(f)).xOnly);
}

/**
 * Runs one svc command. `environ` supplies SVC_* defaults for flags not given (flags win;
 * empty variables count as unset). Throws ClientError / NodeError; never exits.
 */
export async function run(argv: string[], environ: NodeJS.ProcessEnv = process.env, io: StreamIo = { write: (l) => void process.stdout.write(`${l}\n`) }): Promise<Out> {
  const env = (k: string): string | undefined => {
    const v = environ[k];
    return v === undefined || v === '' ? undefined : v;
  };
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw usage(parseArgsError(e as Error & { code?: string }));
  }
  const f = { ...parsed.values } as Flags;
  f.node ??= env('SVC_NODE_URL');
  f.esplora ??= env('SVC_ESPLORA_URL');
  f['wallet-key'] ??= env('SVC_WALLET_KEY');
  f['caller-key'] ??= env('SVC_CALLER_KEY');
  f.network ??= env('SVC_NETWORK');
  if (f['fee-rate'] === undefined && env('SVC_FEE_RATE') !== undefined) {
    f['fee-rate'] = env('SVC_FEE_RATE');
    f.feeRateFromEnv = true;
  }
  const cmd = parsed.positionals[0];
  if (f.help || cmd === 'help') return { json: { usage: USAGE }, text: [USAGE] };
  if (cmd === undefined) throw usage(`no command (${COMMANDS}; svc --help)`);
  try {
    return await command(cmd, parsed.positionals.slice(1), f, io);
  } catch (e) {
    if (e instanceof ClientError && e.code === 'insufficient_funds') {
      const hint = await devnetFundingHint(f);
      if (hint) throw saysWhetherBroadcast(cmd, f, new ClientError(e.code, e.message + hint, e.status, e.txid));
    }
    throw saysWhetherBroadcast(cmd, f, e);
  }
}

/**
 * deploy (but --txid) and call broadcast a transaction that pays a fee: every runtime
 * failure of theirs says whether one went out. One that names a txid says it already
 * (broadcast, or may have been, and what to do next); any other came before the
 * broadcast. A usage error (exit 2) is the command line's, found before anything is read.
 */
function saysWhetherBroadcast(cmd: string, f: Flags, e: unknown): unknown {
  const broadcasts = cmd === 'call' || (cmd === 'deploy' && f.txid === undefined);
  if (!broadcasts || !(e instanceof Error) || (e instanceof ClientError && (e.txid || USAGE_CODES.has(e.code)))) return e;
  if (!e.message.includes('nothing was broadcast')) e.message += ' (nothing was broadcast)';
  return e;
}

const COMMANDS = 'keygen, deploy, call, submit, simulate, status, contract, read, events, devnet, codegen, test, sink';

/**
 * parseArgs's refusal as one line of ours: its own text is several sentences, one of
 * them quoting the option with a quote it never closes.
 */
function parseArgsError(e: Error & { code?: string }): string {
  const m = e.message;
  const unknown = /^Unknown option '([^']*)'/.exec(m);
  if (unknown) return `unknown option ${unknown[1]} (svc --help lists the options; a positional argument starting with "-" goes after "--")`;
  const missing = /^Option '(\S+)(?: <value>)?' argument missing/.exec(m);
  if (missing) return `${missing[1]} needs a value`;
  const extra = /^Option '(\S+)' does not take an argument/.exec(m);
  if (extra) return `${extra[1]} takes no value`;
  return m.split('\n')[0]!.replace(/'/g, '"');
}

/**
 * `--limit -5` as `--limit=-5`: parseArgs takes a value starting with '-' for an option
 * ("ambiguous"); a negative number after an option taking a value is that option's value,
 * so the option's own check says what is wrong with it.
 */
function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.startsWith('--') ? a.slice(2) : null;
    const next = argv[i + 1];
    if (name !== null && (OPTIONS as Record<string, { type: string }>)[name]?.type === 'string' && next !== undefined && /^-[0-9.]/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

async function command(cmd: string, pos: string[], f: Flags, io: StreamIo): Promise<Out> {
  const json = !!f.json;
  const arity = (min: number, max: number, shape: string) => {
    if (pos.length < min || pos.length > max) throw usage(`${cmd} takes ${shape}`);
  };
  /** Positional argument `i`, which the command's arity check requires. */
  const positional = (i: number): string => {
    const a = pos[i];
    if (a === undefined) throw usage(`${cmd} needs argument ${i + 1}`);
    return a;
  };

  switch (cmd) {
    case 'keygen': {
      arity(0, 0, 'no arguments');
      const { networkOf, walletFromSecret } = await sdk();
      const { randomSecretKey, xOnlyPublicKey } = await schnorrLib();
      const net = networkOf(f.network ?? 'regtest');
      const secret = randomSecretKey();
      const w = walletFromSecret(secret, 'p2wpkh', net);
      const t = walletFromSecret(secret, 'p2tr', net);
      const out = {
        secret_key: toHex(secret),
        wif: w.signer.toWIF(),
        caller_key: toHex(xOnlyPublicKey(secret)),
        p2wpkh_address: w.address,
        p2tr_address: t.address,
        network: f.network ?? 'regtest',
      };
      return {
        json: out,
        text: [
          `secret key:     ${out.secret_key}   (keep private; use as SVC_WALLET_KEY / SVC_CALLER_KEY)`,
          `WIF:            ${out.wif}`,
          `caller key:     ${out.caller_key}   (BIP-340 x-only public key)`,
          `p2wpkh address: ${out.p2wpkh_address}`,
          `p2tr address:   ${out.p2tr_address}   (use the key as p2tr:<secret>)`,
        ],
      };
    }
    case 'deploy': {
      arity(1, 1, 'ARTIFACT.json');
      const artifact = readJsonFile(positional(0), 'artifact');
      if (f.txid !== undefined) {
        const txid = hex64(f.txid, '--txid');
        const { SvcClient, checkArtifact } = await sdk();
        checkArtifact(artifact);
        // the chain-data endpoint gives the anchoring transaction, sent along as anchor_tx
        const node = new SvcClient({ nodeUrl: checkUrl(nodeUrl(f), 'node'), esploraUrl: checkUrl(esploraUrl(f), 'chain-data'), http: sayWait(f) });
        const r = await node.register(artifact, txid, { wait: f.wait ? waitOptions(f, json, (c) => c.status) : undefined });
        const out = { contract_id: r.answer.contract_id ?? r.contractId, txid, status: r.active?.status ?? r.answer.status };
        return { json: out, text: [`contract: ${out.contract_id}`, `txid: ${txid}`, `status: ${out.status}`] };
      }
      broadcasting = true;
      const c = await client(f, (txid) => `svc deploy ${pos[0]} --txid ${txid} --wait (registers it if the node does not know it yet, paying nothing, and waits until active)`);
      const r = await c.deploy(artifact, {
        wait: f.wait ? waitOptions(f, json, (x) => x.status) : undefined,
        retry: (txid) => `register it again without paying: svc deploy ${pos[0]} --txid ${txid}`,
      });
      const out = {
        contract_id: r.answer.contract_id ?? r.contractId,
        txid: r.anchor.txid,
        code_hash: toHex(r.codeHash),
        status: r.active?.status ?? r.answer.status,
        ...(r.active ? { block_height: r.active.block_height, tx_index: r.active.tx_index } : {}),
        fee: r.anchor.fee,
        vsize: r.anchor.vsize,
      };
      if (r.answer.contract_id && r.answer.contract_id !== r.contractId) {
        process.stderr.write(`warning: node answered contract id ${r.answer.contract_id}, computed ${r.contractId}\n`);
      }
      return {
        json: out,
        text: [
          `contract: ${out.contract_id}`,
          `txid: ${out.txid}`,
          `code hash: ${out.code_hash}`,
          `status: ${out.status}${r.active ? ` at block ${r.active.block_height} (tx index ${r.active.tx_index})` : ''}`,
          `fee: ${out.fee} sats (${out.vsize} vB)`,
        ],
      };
    }
    case 'call': {
      if (pos.length < 2) throw usage('call takes CONTRACT FUNCTION [ARG...]');
      const contract = hex64(pos[0], 'contract id');
      const fn = positional(1);
      const args = pos.slice(2);
      const callId = f['call-id'];
      if (callId !== undefined && !/^(?:0|[1-9][0-9]{0,19})$/.test(callId)) throw usage(`--call-id must be a u64, got "${callId}"`);
      if (callId !== undefined && BigInt(callId) > 0xffffffffffffffffn) throw usage(`--call-id must be a u64, got "${callId}"`);
      const fallback = f.abi ? abiFromFile(f.abi) : undefined;
      const pay = payments(f);
      const outpoint = f.outpoint === undefined ? undefined : outpointFlag(f.outpoint, '--outpoint');
      broadcasting = true;
      const c = await client(f, (txid) => `svc status ${txid} --wait`);
      const abi = await c.abiFor(contract, fallback);
      if (findFunction(abi, fn).readonly && !f.force) {
        // a readonly call changes nothing: anchoring it would only spend the fee
        throw usage(`${fn} is readonly: read it for free with svc simulate ${contract} ${[fn, ...args].join(' ')} (--force anchors it anyway)`);
      }
      const r = await c.call({
        contractId: contract,
        function: fn,
        args,
        abi,
        callId: callId === undefined ? undefined : BigInt(callId),
        pay,
        outpoint,
        wait: f.wait ? waitOptions(f, json, (s) => s.status) : undefined,
      });
      const out = {
        txid: r.anchor.txid,
        contract_id: contract,
        envelope_hash: toHex(r.call.envelopeHash),
        call_id: r.call.envelope.callId.toString(),
        outpoint: `${toHex(r.call.envelope.outpointTxid)}:${r.call.envelope.outpointVout}`,
        fee: r.anchor.fee,
        payments: pay.map((p, i) => ({ vout: r.anchor.paymentVouts[i]!, address: p.address, sats: p.value })),
        change_vout: r.anchor.changeVout,
        status: r.status?.status ?? r.answer.status,
        ...(r.status ? { final: r.status } : {}),
      };
      const text = [`txid: ${out.txid}`, `envelope hash: ${out.envelope_hash}`, `call id: ${out.call_id}`, `outpoint: ${out.outpoint}`, `fee: ${out.fee} sats`];
      for (const p of out.payments) text.push(`pay: vout ${p.vout} -> ${p.address} ${p.sats} sats`);
      text.push(`change: ${out.change_vout === null ? 'none (below dust: added to the fee)' : `vout ${out.change_vout}`}`);
      text.push(...(r.status ? statusLines(r.status) : [`status: ${out.status}`]));
      const bad = r.status && r.status.status !== 'executed';
      return { json: out, text, exit: bad ? 3 : 0 };
    }
    case 'simulate': {
      if (pos.length < 2) throw usage('simulate takes CONTRACT FUNCTION [ARG...]');
      const contract = hex64(pos[0], 'contract id');
      const fnName = positional(1);
      const inputs = (f.input ?? []).map((t) => outpointFlag(t, '--input'));
      const pay = payments(f);
      const node = new NodeClient(checkUrl(nodeUrl(f), 'node'));
      const abi = f.abi ? abiFromFile(f.abi) : await node.abi(contract);
      if (!abi) throw new ClientError('bad_argument', `the node does not serve the ABI of ${contract}; pass --abi ARTIFACT.json`);
      const args = argsFromText(findFunction(abi, fnName), pos.slice(2)).map(typedValueToJson);
      const outputs: { value: string; script: string }[] = [];
      if (pay.length) {
        // the same vouts as `svc call --pay`: vout 0 is the stamp (value 0), payments follow
        const { networkOf, paymentOutputs } = await sdk();
        const net = networkOf(f.network ?? 'regtest');
        outputs.push({ value: '0', script: '6a' });
        for (const o of paymentOutputs(net, pay)) outputs.push({ value: String(o.value), script: toHex(o.script) });
      }
      const caller = f.caller !== undefined ? hex64(f.caller, '--caller') : await defaultCaller(f);
      const r = await node.simulate(contract, { function: fnName, args, caller, inputs, outputs });
      const text = [`status: ${r.status}`];
      if (r.status === 'executed') text.push(`result: ${JSON.stringify(r.result)}`);
      if (r.error) text.push(`error: ${r.error.code}: ${r.error.message}`);
      for (const e of r.events) text.push(`event: ${e.name} ${JSON.stringify(e.params)}${e.contract_id !== contract ? ` (contract ${e.contract_id})` : ''}`);
      // the state is the node's at its processed height; the run sees the next height (height())
      text.push(`instructions: ${r.instructions}`, `state: height ${r.height - 1}, root ${r.state_root ?? 'none'}; run as if confirmed at height ${r.height}`);
      return { json: r, text, exit: r.status === 'executed' ? 0 : 3 };
    }
    case 'status': {
      arity(1, 1, 'TXID');
      const txid = hex64(pos[0], 'txid');
      const node = new NodeClient(checkUrl(nodeUrl(f), 'node'));
      try {
        const s = f.wait ? await node.waitForCall(txid, waitOptions(f, json, (x) => x.status)) : await node.callStatus(txid);
        if (!f.proof) return { json: s, text: statusLines(s) };
        // Asked again with its proof (after a wait, the final record), verified before it is shown.
        const p = await node.callStatusProven(txid, { network: (f.network ?? 'regtest') as ProofNetwork });
        const { proof: _proof, proven, ...record } = p;
        return { json: { ...record, proven }, text: [...statusLines(record), ...provenLines(proven)] };
      } catch (e) {
        if (e instanceof ClientError && e.code === 'not_found') {
          throw new ClientError(e.code, `${e.message} (for a deploy, use svc contract CONTRACT_ID or svc deploy --wait)`, e.status);
        }
        throw e;
      }
    }
    case 'submit': {
      arity(1, 1, 'CALL.json');
      const saved = readJsonFile(positional(0), 'call submission') as Partial<Record<keyof CallBody, unknown>> | null;
      const str = (k: keyof CallBody): string | undefined => (typeof saved?.[k] === 'string' ? (saved[k] as string) : undefined);
      for (const k of ['txid', 'contract_id', 'payload'] as const) if (str(k) === undefined) throw usage(`${pos[0]} is not a call submission as svc call saves it: no "${k}"`);
      const body: CallBody = { txid: hex64(str('txid'), 'txid of the submission'), contract_id: hex64(str('contract_id'), 'contract_id of the submission'), payload: str('payload') ?? '' };
      if (str('anchor_tx') !== undefined) body.anchor_tx = str('anchor_tx');
      const { checkBodySize, gatherCoin, EsploraClient, outpointOfPayload } = await sdk();
      const savedCoin = saved?.coin;
      if (savedCoin !== undefined && savedCoin !== null) body.coin = savedCoin as CallBody['coin'];
      else if (body.anchor_tx !== undefined) {
        // A submission saved without its coin's evidence: gathered from this client's chain-data endpoint.
        body.coin = (await gatherCoin(new EsploraClient(checkUrl(esploraUrl(f), 'chain-data')), body.anchor_tx, outpointOfPayload(body.payload))).json;
      }
      checkBodySize(body);
      const node = new NodeClient(checkUrl(nodeUrl(f), 'node'));
      const answer = await node.submitCall(body);
      const final = f.wait ? await node.waitForCall(body.txid, waitOptions(f, json, (x) => x.status)) : undefined;
      const out = { ...answer, ...(final ? { status: final.status, final } : {}) };
      return { json: out, text: [`txid: ${answer.txid}`, `envelope hash: ${answer.envelope_hash}`, ...(final ? statusLines(final) : [`status: ${answer.status}`])], exit: final && final.status !== 'executed' ? 3 : 0 };
    }
    case 'contract': {
      arity(1, 1, 'CONTRACT');
      const contract = hex64(pos[0], 'contract id');
      const node = new NodeClient(checkUrl(nodeUrl(f), 'node'));
      const c = f.wait ? await node.waitForContract(contract, waitOptions(f, json, (x) => x.status)) : await node.contractInfo(contract);
      const { abi: _abi, ...shown } = c;
      return { json: shown, text: contractLines(c) };
    }
    case 'codegen': {
      arity(1, 1, 'ARTIFACT.json');
      const { codegenModule } = await import('./codegen.js');
      let artifact: unknown;
      try {
        artifact = JSON.parse(readFileSync(positional(0), 'utf8'));
      } catch (e) {
        throw usage(`cannot read artifact ${positional(0)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      let text: string;
      try {
        text = codegenModule(artifact, positional(0), { name: f.name, importFrom: f.import });
      } catch (e) {
        throw e instanceof ClientError ? usage(e.message) : e;
      }
      if (f.out === undefined) return { json: { module: text }, text: [text.replace(/\n$/, '')] };
      writeFileSync(f.out, text);
      return { json: { out: f.out, bytes: Buffer.byteLength(text) }, text: [`wrote ${f.out}`] };
    }
    case 'test': {
      arity(1, 2, 'CONTRACT.svc [TESTS]');
      const file = positional(0);
      const testsFile = pos[1] ?? file.replace(/\.svc$/, '') + '.tests';
      const read = (p: string, what: string): string => {
        try {
          return readFileSync(p, 'utf8');
        } catch (e) {
          throw usage(`cannot read ${what} ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      };
      const source = read(file, 'contract');
      const tests = read(testsFile, 'tests');
      const { compileSource, formatCompileError } = await import('../compiler/index.js');
      const { runTests } = await import('./contract-test.js');
      const compiled = compileSource(source, file);
      if (!compiled.ok) throw new ClientError('compile_error', compiled.errors.map((e) => formatCompileError(e, source).split('\n')[0]).join('; '));
      const r = runTests(compiled.artifact, tests, {
        name: basename(file).replace(/\.svc$/, ''),
        // a `deploy NAME FILE` line: FILE relative to the test file
        load: (other) => {
          const path = resolve(dirname(testsFile), other);
          const src = read(path, 'contract');
          const c = compileSource(src, path);
          if (!c.ok) throw new Error(c.errors.map((e) => formatCompileError(e, src).split('\n')[0]).join('; '));
          return c.artifact;
        },
      });
      if (!r.ok) throw usage(r.errors.map((e) => `${testsFile}:${e.line}: ${e.message}`).join('; '));
      const text: string[] = [];
      let failed = 0;
      for (const t of r.tests) {
        if (t.failures.length) failed++;
        text.push(`${t.failures.length ? 'FAIL' : 'ok  '} ${t.name} (${t.calls} call${t.calls === 1 ? '' : 's'})`);
        for (const x of t.failures) text.push(`  ${testsFile}:${x.line}: ${x.message}`);
      }
      text.push(`${r.tests.length} test${r.tests.length === 1 ? '' : 's'}, ${failed} failed`);
      const out = { file, tests_file: testsFile, tests: r.tests.map((t) => ({ name: t.name, line: t.line, calls: t.calls, failures: t.failures.map((x) => ({ line: x.line, message: x.message })) })), failed };
      return { json: out, text, exit: failed ? 3 : 0 };
    }
    case 'devnet': {
      const sub = pos[0];
      const ctl = new DevnetControl(checkUrl(esploraUrl(f), 'devnet chain'));
      if (sub === 'mine') {
        arity(1, 2, 'mine [N]');
        const n = pos[1] === undefined ? 1 : Number(pos[1]);
        if (!Number.isSafeInteger(n) || n < 1 || !/^[0-9]+$/.test(pos[1] ?? '1')) throw usage(`devnet mine N: N must be a whole number >= 1, got "${pos[1]}"`);
        if (n > 1000) throw usage(`devnet mine mines at most 1000 blocks at once, got ${n}`);
        const r = await ctl.mine(n);
        return { json: r, text: [`mined ${r.hashes.length} block(s), height ${r.height}`] };
      }
      if (sub === 'fund') {
        arity(1, 3, 'fund [ADDRESS] [SATS]');
        const address = pos[1] ?? (await wallet(f)).address;
        const sats = pos[2] === undefined ? DEVNET_FUND_SATS : Number(pos[2]);
        if (!Number.isSafeInteger(sats) || sats < 1 || !/^[0-9]+$/.test(pos[2] ?? '1')) throw usage(`devnet fund SATS: SATS must be a whole number >= 1, got "${pos[2]}"`);
        const paid = await ctl.faucet(address, sats);
        const mined = await ctl.mine(1);
        return {
          json: { ...paid, address, sats, height: mined.height },
          text: [`paid ${sats} sats to ${address} in ${paid.txid}:${paid.vout}`, `mined 1 block, height ${mined.height}`],
        };
      }
      throw usage('devnet takes fund [ADDRESS] [SATS] or mine [N]');
    }
    case 'read': {
      arity(2, 3, 'CONTRACT FIELD [ARG]');
      const contract = hex64(pos[0], 'contract id');
      const field = positional(1);
      const node = new NodeClient(checkUrl(nodeUrl(f), 'node'));
      let arg: string | undefined;
      const abi = f.abi ? abiFromFile(f.abi) : await node.abi(contract).catch(() => null);
      const def = abi ? findField(abi, field) : null;
      if (pos[2] !== undefined) {
        if (def && def.key === null) throw usage(`field "${field}" is a scalar: it takes no ARG`);
        if (def) arg = encodeFieldArg(def.key!, pos[2]);
        else {
          const typed = splitTyped(pos[2]);
          arg = typed ? encodeFieldArg(typed.type, pos[2]) : encodeURIComponent(pos[2]);
        }
      } else if (def && def.key !== null) {
        throw usage(`field "${field}" is a map<${def.key}, ${def.value}>: give the key, svc read ${contract} ${field} KEY (KEY a ${def.key})`);
      }
      const a = await node.readField(contract, field, arg);
      return {
        json: a,
        text: [`${a.field}${a.key !== null && a.key !== undefined ? `[${JSON.stringify(a.key)}]` : ''} = ${JSON.stringify(a.value)}${a.exists === false ? ' (not set: default)' : ''}  at height ${a.height}`],
      };
    }
    case 'events': {
      arity(1, 1, 'CONTRACT');
      const contract = hex64(pos[0], 'contract id');
      const node = new NodeClient(checkUrl(nodeUrl(f), 'node'));
      if (f.follow) return follow(node, contract, f, json, io);
      const from = num(f.from, 'from', { int: true, min: 0 });
      const to = num(f.to, 'to', { int: true, min: 0 });
      if (from !== undefined && to !== undefined && from > to) throw usage(`--from ${from} is above --to ${to}: no height lies between them`);
      const a = await node.events(contract, {
        name: f.name,
        from,
        to,
        limit: num(f.limit, 'limit', { int: true, min: 1 }),
        offset: num(f.offset, 'offset', { int: true, min: 0 }),
      });
      const text = a.events.map((e) => `${e.block_height}:${e.tx_index}:${e.log_index} ${e.name} ${JSON.stringify(e.params)} tx ${e.txid}`);
      if (text.length === 0) text.push('no events');
      if (a.next_offset !== null && a.next_offset !== undefined) text.push(`more: --offset ${a.next_offset}`);
      return { json: a, text };
    }
    default:
      throw usage(`unknown command "${cmd}" (${COMMANDS}; svc --help)`);
  }
}

/** events --follow: the live feed, one line per message, until `io.signal` aborts. */
async function follow(node: NodeClient, contract: string, f: Flags, json: boolean, io: StreamIo): Promise<Out> {
  if (f.to !== undefined || f.limit !== undefined || f.offset !== undefined) throw usage('--follow takes --name, --from or --cursor (not --to, --limit, --offset)');
  if (f.from !== undefined && f.cursor !== undefined) throw usage('give --from or --cursor, not both');
  const from = num(f.from, 'from', { int: true, min: 0 }) ?? (f.cursor === undefined ? 0 : undefined);
  const feed = node.stream({
    subscriptions: [{ kind: 'events', id: 'events', contractId: contract, eventName: f.name, cursor: f.cursor, fromHeight: from }],
    signal: io.signal,
    onReconnect: json ? undefined : (code, reason) => process.stderr.write(`... feed closed (${code}${reason ? ` ${reason}` : ''}); resuming\n`),
  });
  for await (const m of feed) {
    if (json) io.write(JSON.stringify(m));
    else if (m.type === 'event') io.write(`${m.block_height}:${m.tx_index}:${m.log_index} ${m.name} ${JSON.stringify(m.params)} tx ${m.txid} cursor ${m.cursor}`);
    // An events subscription's rollbacks are the events form (retracted cursors).
    else if (m.type === 'rollback' && 'retracted' in m) io.write(`rollback: blocks from ${m.fork_height} left the chain; retracted ${m.retracted.length} event(s) after cursor ${m.cursor}`);
    else if (m.type === 'synced') io.write(`-- synced at height ${m.height}; following`);
    else if (m.type === 'error') throw new ClientError(m.code, m.message);
  }
  return { json: null, text: [], streamed: true };
}

export function errorOf(e: unknown): { code: string; message: string; exit: number; txid?: string } {
  if (e instanceof ClientError) return { code: e.code, message: e.message, exit: USAGE_CODES.has(e.code) ? 2 : 1, ...(e.txid ? { txid: e.txid } : {}) };
  if (e instanceof NodeError) return { code: e.code, message: e.message, exit: e.code === 'bad_request' ? 2 : 1 };
  return { code: 'internal', message: (e as Error)?.message ?? String(e), exit: 1 };
}

