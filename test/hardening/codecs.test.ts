/**
 * Hostile input to the decoders, in process (issue 10): Borsh envelopes, contract artifacts
 * and bytecode, compiler sources, and Esplora answers. Property-based (fast-check), each
 * property bounded by a run count and a time limit; a failure prints the seed to replay.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { decodeEnvelope, encodeEnvelope, openEnvelope } from '@svc-node/protocol/envelope';
import { NodeError } from '@svc-node/protocol/errors';
import { verifyArtifact } from '@svc-node/protocol/vm/verifier';
import { execute } from '../../src/vm/execute.js';
import { LIMITS } from '@svc-node/protocol/vm/isa';
import { compileSource } from '../../src/compiler/index.js';
import type { CompiledArtifact as Artifact } from '@svc-node/protocol/contract';
import { EsploraClient } from '../../src/chain/esplora-client.js';
import { parseRawBlock } from '@svc-node/protocol/bitcoin';
import type { Value } from '@svc-node/protocol/value';
import { repoRoot, fixturesDir } from '../helpers/paths.js';
import { MemHost, ctx, id } from '../helpers/vm.js';
import { entryBody, listen, manifest, type Listening } from '../helpers/chain-servers.js';

/** Per property: at most this many cases, and never more than this long. */
const RUNS = 400;
const LIMIT_MS = 4_000;
const params = { numRuns: RUNS, interruptAfterTimeLimit: LIMIT_MS } as const;

/** How many cases each property actually ran (reported in docs/RELIABILITY.md). */
const ran: Record<string, number> = {};
function counted<T, R>(name: string, f: (x: T) => R): (x: T) => R {
  return (x: T) => {
    ran[name] = (ran[name] ?? 0) + 1;
    return f(x);
  };
}
after(() => console.log(`# hardening/codecs cases: ${JSON.stringify(ran)}`));

/** Byte-level mutations of a valid input: flips, overwrites, inserts, deletes, truncations. */
function mutated(seed: Uint8Array): fc.Arbitrary<Uint8Array> {
  const op = fc.oneof(
    fc.record({ k: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ k: fc.constant('set' as const), at: fc.nat(), v: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ k: fc.constant('ins' as const), at: fc.nat(), b: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
    fc.record({ k: fc.constant('del' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 8 }) }),
    fc.record({ k: fc.constant('cut' as const), at: fc.nat() }),
  );
  return fc.array(op, { minLength: 1, maxLength: 4 }).map((ops) => {
    let b = Buffer.from(seed);
    for (const o of ops) {
      const at = b.length === 0 ? 0 : o.at % (b.length + 1);
      if (o.k === 'flip' && b.length > 0) b[at % b.length] ^= 1 << o.bit;
      else if (o.k === 'set' && b.length > 0) b[at % b.length] = o.v;
      else if (o.k === 'ins') b = Buffer.concat([b.subarray(0, at), o.b, b.subarray(at)]);
      else if (o.k === 'del') b = Buffer.concat([b.subarray(0, at), b.subarray(at + o.n)]);
      else if (o.k === 'cut') b = b.subarray(0, at);
    }
    return new Uint8Array(b);
  });
}

// --- Borsh envelopes -----------------------------------------------------------------------

const vectors = JSON.parse(readFileSync(join(fixturesDir, 'vectors', 'envelopes.json'), 'utf8')).cases as { envelope_borsh: string }[];
const validEnvelopes = vectors.map((c) => new Uint8Array(Buffer.from(c.envelope_borsh, 'hex')));

function decodeOnlyThrowsNodeErrors(bytes: Uint8Array): void {
  for (const f of [decodeEnvelope, openEnvelope] as ((b: Uint8Array) => unknown)[]) {
    try {
      const e = f(bytes);
      if (f === decodeEnvelope) {
        // What decodes re-encodes to the same bytes: the decoder is strict (one encoding per envelope).
        assert.deepEqual(Buffer.from(encodeEnvelope(e as ReturnType<typeof decodeEnvelope>)), Buffer.from(bytes));
      }
    } catch (e) {
      assert.ok(e instanceof NodeError, `non-NodeError thrown: ${String(e)}`);
      // openEnvelope also checks the signature: bad_signature is its one extra answer.
      const allowed = f === decodeEnvelope ? ['bad_request', 'payload_too_large'] : ['bad_request', 'payload_too_large', 'bad_signature'];
      assert.ok(allowed.includes(e.code), `${f.name}: code ${e.code}`);
    }
  }
}

test('decodeEnvelope/openEnvelope: random bytes throw only NodeError bad_request/payload_too_large', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 400 }), counted('envelope random', decodeOnlyThrowsNodeErrors)), params);
  // Sizes around the 64 KiB bound.
  for (const n of [65_535, 65_536, 65_537, 200_000]) decodeOnlyThrowsNodeErrors(new Uint8Array(n).fill(1));
});

test('decodeEnvelope: mutated valid envelopes throw only NodeError or decode canonically', () => {
  assert.ok(validEnvelopes.length > 0);
  const arb = fc.integer({ min: 0, max: validEnvelopes.length - 1 }).chain((i) => mutated(validEnvelopes[i]!));
  fc.assert(fc.property(arb, counted('envelope mutated', decodeOnlyThrowsNodeErrors)), params);
});

// --- Artifacts and bytecode ----------------------------------------------------------------

const examples = readdirSync(join(repoRoot, 'examples')).filter((f) => f.endsWith('.svc'));
const exampleSources = examples.map((f) => ({ f, src: readFileSync(join(repoRoot, 'examples', f), 'utf8') }));
const artifacts: Artifact[] = exampleSources.map(({ f, src }) => {
  const r = compileSource(src, f);
  if (!r.ok) throw new Error(`${f} does not compile`);
  return r.artifact;
});

const ARG_VALUES: Value[] = [
  { type: 'u64', value: 7n },
  { type: 'i64', value: -3n },
  { type: 'u128', value: 2n ** 100n },
  { type: 'bool', value: true },
  { type: 'string', value: 'x' },
  { type: 'bytes', value: new Uint8Array([1, 2]) },
  { type: 'key', value: id(9) },
];

/** verifyArtifact never throws; whatever verifies runs in execute without throwing, within the budget. */
function verifyThenRun(a: unknown): void {
  let v: ReturnType<typeof verifyArtifact>;
  try {
    v = verifyArtifact(a as Artifact);
  } catch (e) {
    assert.fail(`verifyArtifact threw: ${String((e as Error)?.stack ?? e)}`);
  }
  if (!v.ok) {
    assert.equal(typeof v.reason, 'string');
    assert.ok(Number.isInteger(v.offset) && v.offset >= -1, `offset ${v.offset}`);
    return;
  }
  const host = new MemHost();
  const cid = host.deploy(id(1), v.program);
  const fns = Object.keys((a as Artifact).function_offsets ?? {});
  for (const fn of fns.slice(0, 6)) {
    for (let n = 0; n <= 2; n++) {
      const r = execute({ contractId: cid, function: fn, args: ARG_VALUES.slice(0, n), context: ctx(), host });
      assert.ok(r.instructions <= LIMITS.instructions, `instructions ${r.instructions}`);
      host.apply(r);
    }
  }
}

test('verifyArtifact: mutated bytecode never throws; what verifies executes within the limit', () => {
  const arb = fc.integer({ min: 0, max: artifacts.length - 1 }).chain((i) =>
    mutated(new Uint8Array(Buffer.from(artifacts[i]!.bytecode, 'hex'))).map((code) => ({ ...artifacts[i]!, bytecode: Buffer.from(code).toString('hex') })),
  );
  fc.assert(fc.property(arb, counted('bytecode mutated', verifyThenRun)), params);
  // The unmutated examples verify and run.
  for (const a of artifacts) verifyThenRun(a);
});

test('verifyArtifact: random bytecode and hostile artifact JSON never throw', () => {
  const base = artifacts[0]!;
  const hostile = fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => ({ ...base, bytecode: Buffer.from(b).toString('hex') })),
    fc.jsonValue().map((j) => j as unknown),
    fc.record({ field: fc.constantFrom('abi', 'constants', 'function_offsets', 'bytecode'), v: fc.jsonValue() }).map(({ field, v }) => ({ ...base, [field]: v })),
    // The ABI JSON text mutated byte-wise, kept only when it still parses.
    mutated(Buffer.from(JSON.stringify(base.abi))).map((b) => {
      try {
        return { ...base, abi: JSON.parse(Buffer.from(b).toString('utf8')) as unknown };
      } catch {
        return { ...base, abi: null };
      }
    }),
    mutated(Buffer.from(JSON.stringify(base.constants))).map((b) => {
      try {
        return { ...base, constants: JSON.parse(Buffer.from(b).toString('utf8')) as unknown };
      } catch {
        return { ...base, constants: 42 };
      }
    }),
  );
  fc.assert(fc.property(hostile, counted('artifact hostile', verifyThenRun)), params);
});

// --- Compiler sources ----------------------------------------------------------------------

function compilesOrErrors(src: string): void {
  let r: ReturnType<typeof compileSource>;
  try {
    r = compileSource(src, 'fuzz.svc');
  } catch (e) {
    assert.fail(`compileSource threw: ${String((e as Error)?.stack ?? e)}\n--- source ---\n${src.slice(0, 2000)}`);
  }
  if (r.ok) {
    const v = verifyArtifact(r.artifact);
    assert.ok(v.ok, `compiled artifact does not verify: ${v.ok ? '' : v.reason}`);
    return;
  }
  assert.ok(r.errors.length > 0);
  for (const e of r.errors) {
    assert.equal(e.file, 'fuzz.svc');
    assert.ok(Number.isInteger(e.line) && e.line >= 1 && Number.isInteger(e.col) && e.col >= 1, `position ${e.line}:${e.col}`);
    assert.equal(typeof e.message, 'string');
  }
}

const TOKENS = ['contract', 'C', 'implements', 'field', 'map', 'event', 'pub', 'readonly', 'fn', 'let', 'if', 'else', 'for', 'in', 'return',
  'revert', 'emit', 'u64', 'i64', 'u128', 'bool', 'string', 'bytes', 'key', 'x', 'y', '{', '}', '(', ')', '[', ']', ':', ';', ',', '.', '..',
  '->', '=', '==', '+', '-', '*', '/', '%', '<', '>', '<=', '!', '&&', '||', '0', '1', '18446744073709551616', '0x00ff', '"s"', '"\\u{10FFFF}"',
  'true', 'false', 'caller', 'self', '\n', ' ', '//', '/*', '"', '\u0000', '\u{1F600}'];

test('compileSource: random token soup never throws; errors are file:line:col', () => {
  const soup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 120 }).map((t) => t.join(' '));
  fc.assert(fc.property(fc.oneof(soup, fc.string({ maxLength: 200 })), counted('compiler soup', compilesOrErrors)), params);
});

test('compileSource: mutated examples never throw; errors are file:line:col or a verifying artifact', () => {
  const arb = fc.integer({ min: 0, max: exampleSources.length - 1 }).chain((i) => {
    const src = exampleSources[i]!.src;
    return fc.oneof(
      mutated(Buffer.from(src, 'utf8')).map((b) => Buffer.from(b).toString('utf8')),
      // Token-level: delete or duplicate a line.
      fc.nat().map((n) => {
        const lines = src.split('\n');
        const k = n % lines.length;
        return n % 2 === 0 ? [...lines.slice(0, k), ...lines.slice(k + 1)].join('\n') : [...lines.slice(0, k + 1), lines[k]!, ...lines.slice(k + 1)].join('\n');
      }),
    );
  });
  fc.assert(fc.property(arb, counted('compiler mutated', compilesOrErrors)), { ...params, numRuns: 300 });
});

// --- Esplora answers -----------------------------------------------------------------------

/** The answer the local server gives next (one mutated recorded body). */
let answer: Buffer = Buffer.alloc(0);
let srv: Listening;
before(async () => {
  srv = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.end(answer);
  });
});
after(() => srv.close());

const mk = (): EsploraClient => new EsploraClient({ baseUrl: srv.url, budget: false, retries: 0, timeoutMs: 2_000 });

const rawBlocks = manifest.filter((e) => /^\/block\/[0-9a-f]{64}\/raw$/.test(e.path) && e.status === 200);
const txHexes = manifest.filter((e) => /^\/tx\/[0-9a-f]{64}\/hex$/.test(e.path) && e.status === 200);
const headers = manifest.filter((e) => /^\/block\/[0-9a-f]{64}\/header$/.test(e.path) && e.status === 200);

async function errorOrRight<T>(p: Promise<T>, right: (v: T) => void): Promise<void> {
  let v: T;
  try {
    v = await p;
  } catch (e) {
    assert.ok(e instanceof NodeError, `non-NodeError: ${String(e)}`);
    return;
  }
  right(v);
}

test('Esplora client: mutated raw blocks never parse into a block with the requested hash unless it is the right block', async () => {
  assert.ok(rawBlocks.length > 0);
  const originals = rawBlocks.map((e) => ({ hash: e.path.split('/')[2]!, body: entryBody(e) }));
  const truth = originals.map((o) => parseRawBlock(o.body, o.hash));
  const arb = fc.integer({ min: 0, max: originals.length - 1 }).chain((i) => mutated(originals[i]!.body).map((b) => ({ i, b })));
  await fc.assert(
    fc.asyncProperty(arb, counted('esplora raw block', async ({ i, b }) => {
      answer = Buffer.from(b);
      await errorOrRight(mk().rawBlock(originals[i]!.hash), (blk) => {
        assert.equal(blk.hash, originals[i]!.hash);
        assert.deepEqual(blk.txids, truth[i]!.txids, 'a mutated block parsed into different transactions');
      });
    })),
    { ...params, numRuns: 200 },
  );
});

test('Esplora client: mutated tx hex and headers give an error or the right value', async () => {
  const txs = txHexes.map((e) => ({ id: e.path.split('/')[2]!, body: entryBody(e) }));
  const hdrs = headers.map((e) => ({ id: e.path.split('/')[2]!, body: entryBody(e) }));
  const arb = fc.oneof(
    fc.integer({ min: 0, max: txs.length - 1 }).chain((i) => mutated(txs[i]!.body).map((b) => ({ kind: 'tx' as const, i, b }))),
    fc.integer({ min: 0, max: hdrs.length - 1 }).chain((i) => mutated(hdrs[i]!.body).map((b) => ({ kind: 'header' as const, i, b }))),
  );
  await fc.assert(
    fc.asyncProperty(arb, counted('esplora tx/header', async ({ kind, i, b }) => {
      answer = Buffer.from(b);
      if (kind === 'tx') {
        const t = txs[i]!;
        await errorOrRight(mk().tx(t.id), (tx) => assert.equal(tx.getId(), t.id));
      } else {
        const h = hdrs[i]!;
        await errorOrRight(mk().blockHeader(h.id), (hd) => {
          assert.equal(hd.hash, h.id);
          assert.equal(Buffer.from(b).toString('utf8'), h.body.toString('utf8'), 'a different header hashed to the same id');
        });
      }
    })),
    { ...params, numRuns: 200 },
  );
});
