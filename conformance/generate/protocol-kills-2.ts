/**
 * More cases the mutation run over the protocol package (outside vm/ and state/) showed
 * missing, each pinning the rule its list names:
 * - header runs (packages/protocol/src/headers.ts, verifyHeaderRun): the bits rules apply
 *   from height 1 (a header at height 0 is a genesis: only its link and its proof of work
 *   are checked); on a test network a header 601 to 1,200 s after its parent is held to
 *   its period's bits, the powLimit's only past 1,200 s. Real recorded mainnet headers
 *   placed at the heights each case names, as header-networks.ts does;
 * - the size bound of a proven transaction (packages/protocol/src/evidence.ts,
 *   MAX_EVIDENCE_TX_BYTES = 1,000,000): a canonical transaction of exactly that many bytes
 *   is taken, one a byte longer refused. Each is one input and one output whose script
 *   fills the rest with zero bytes (2 MB of vector hex each, which compresses to almost
 *   nothing in git);
 * - the envelope encoder over every value type, and over no args.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Transaction } from 'bitcoinjs-lib';
import { fixturesDir } from '../../test/helpers/paths.js';
import { MAX_EVIDENCE_TX_BYTES } from '@svc-node/protocol/evidence';
import { envelopeToJson } from '@svc-node/protocol/envelope';
import { A_LAST, A_NEXT, periodFirstWith } from './header-networks.js';
import { ALL_ARGS } from './codec.js';
import { envelope } from './keys.js';
import type { Area, CaseInput } from './kit.js';

const MAINNET = '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f';
const TESTNET3 = '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943';

function headerRunCases(): CaseInput[] {
  const m = (JSON.parse(readFileSync(join(fixturesDir, 'esplora', 'headers', 'mainnet-0-10.json'), 'utf8')) as { header: string }[]).map((h) => h.header);
  const gap = Buffer.from(m[4]!, 'hex').readUInt32LE(68) - Buffer.from(m[3]!, 'hex').readUInt32LE(68);
  if (gap <= 600 || gap > 1200) throw new Error(`protocol-kills-2: mainnet headers 3 and 4 are ${gap} s apart, not 601 to 1,200`);
  const c = (id: string, genesis: string, height: number, prev: string | null, periodFirst: string | null, run: string[], pins: string): CaseInput => ({
    id, pins, input: { genesis_hash: genesis, start: { height, prev, period_first: periodFirst }, run },
  });
  return [
    c('mainnet-height-1-bits-change', MAINNET, 1, A_LAST, null, [A_NEXT], 'mainnet: a header at height 1 is inside the first period: bits other than its parent\'s are refused (the rules that read the header below start at height 1)'),
    c('mainnet-height-0-with-prev', MAINNET, 0, A_LAST, m[0]!, [A_NEXT], 'a header at height 0 is a genesis: no bits rule applies to it (neither its parent\'s bits nor the retarget from the period\'s first named), only its link to the header named below and its proof of work'),
    c('testnet3-in-period-815-s-period-bits', TESTNET3, 2020, m[3]!, periodFirstWith(m[0]!, 0, 0x1c00ffff), [m[4]!], `testnet3: inside a period, a header ${gap} s after its parent (more than the spacing, at most twice it) must carry its period's bits, not the powLimit's: refused`),
  ];
}

/** A canonical transaction of exactly `size` bytes: one input, one output whose script is zero bytes filling the rest. */
function txOfSize(size: number): string {
  const tx = new Transaction();
  tx.version = 2;
  tx.addInput(Buffer.alloc(32, 0x11), 0);
  // 59 bytes around the script (version, counts, the input, the value, locktime) and 5 for its length (0xfe and 4 bytes).
  tx.addOutput(Buffer.alloc(size - 64), 1_000n);
  const raw = Buffer.from(tx.toBuffer());
  if (raw.length !== size) throw new Error(`protocol-kills-2: the transaction is ${raw.length} bytes, not ${size}`);
  return raw.toString('hex');
}

function sizeBoundCases(): CaseInput[] {
  const n = (x: number) => String(x).replace(/\B(?=(\d{3})+$)/g, ',');
  return [
    { id: 'size-at-bound', pins: `a canonical transaction of exactly ${n(MAX_EVIDENCE_TX_BYTES)} bytes (MAX_EVIDENCE_TX_BYTES) is taken`, input: { tx_hex: txOfSize(MAX_EVIDENCE_TX_BYTES) } },
    { id: 'size-past-bound', pins: `a canonical transaction of ${n(MAX_EVIDENCE_TX_BYTES + 1)} bytes, one past MAX_EVIDENCE_TX_BYTES, is refused`, input: { tx_hex: txOfSize(MAX_EVIDENCE_TX_BYTES + 1) } },
  ];
}

/**
 * The encoder writes every value tag (codec.envelope-decode reads them back from bytes: its
 * signing message is hashed over the bytes as received, so only this case re-encodes them).
 */
function encodeCases(): CaseInput[] {
  const e = envelope({ function: 'transfer', args: ALL_ARGS, callId: (1n << 64n) - 1n, outpointVout: 0xffffffff });
  return [
    { id: 'every-value-type', pins: 'an envelope holding every value tag in args (u64, i64, u128, bool, string, bytes, key) encodes to the bytes codec.envelope-decode\'s every-value-type decodes (the same envelope hash)', input: { envelope: envelopeToJson(e) } },
    { id: 'no-args', pins: 'an envelope with no args (an empty list) encodes: args count 0', input: { envelope: envelopeToJson(envelope()) } },
  ];
}

export function protocolKillArea2(): Area {
  return {
    'headers.run': headerRunCases(),
    'evidence.proven-tx': sizeBoundCases(),
    'codec.envelope-encode': encodeCases(),
  };
}
