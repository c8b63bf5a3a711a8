/**
 * Children's output through the supervisor: one pipe per child, whole lines
 * forwarded, a line over the bound cut with a report. The splitter in process, then the
 * real Supervisor with three children writing long lines at once to a slow reader.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { LineSplitter, MAX_LINE_BYTES, type CutLine } from '../../src/supervisor/lines.js';
import { LINES_PER_CHILD, LONG_LINE_AT, LONG_LINE_BYTES, line, padSizes } from './lines-fixture.js';

test('the line splitter: any chunking gives back exactly the lines; a line over the bound is cut and reported with its length', () => {
  const max = 64;
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 150 }), { maxLength: 30 }), fc.array(fc.integer({ min: 1, max: 90 }), { minLength: 1, maxLength: 20 }), fc.boolean(), (lens, cuts, trailing) => {
      const lines = lens.map((n, i) => String.fromCharCode(65 + (i % 26)).repeat(n));
      const text = Buffer.from(lines.join('\n') + (trailing || lines.length === 0 ? '' : '\n'));
      const s = new LineSplitter(max);
      const got: (string | CutLine)[] = [];
      const take = (items: (Buffer | CutLine)[]): void => {
        for (const it of items) {
          if (Buffer.isBuffer(it)) {
            assert.equal(it.at(-1), 0x0a, 'whole lines only');
            got.push(...it.toString().slice(0, -1).split('\n'));
          } else got.push(it);
        }
      };
      let at = 0;
      for (let k = 0; at < text.length; k++) {
        const n = cuts[k % cuts.length]!;
        take(s.push(text.subarray(at, at + n)));
        at += n;
      }
      const last = s.end();
      if (last) take([last]);
      // An unterminated last line comes out at the end, with a newline.
      const want = lines.length === 0 || (trailing && lines.at(-1) === '') ? lines.slice(0, -1) : lines;
      assert.equal(got.length, want.length);
      want.forEach((l, i) => {
        const g = got[i]!;
        if (l.length <= max) return assert.equal(g, l);
        // Cut: its length, and its beginning as far as it was held (the bound and a bit).
        assert.ok(typeof g !== 'string');
        assert.equal(g.bytes, l.length);
        assert.ok(l.startsWith(g.head) && g.head.length > max, `head of ${g.head.length}`);
      });
    }),
    { numRuns: 300 },
  );
});

test('three children writing long lines at once through a slow reader: only whole lines, none lost, the over-long one cut and reported', { timeout: 20_000 }, async () => {
  const fixture = fileURLToPath(new URL('./lines-fixture.js', import.meta.url));
  const h = spawn(process.execPath, [fixture], { env: { ...process.env, LINES_ROLE: 'harness' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  let doneSeen = 0;
  let stopping = false;
  let bytes = 0;
  // The slow reader: every chunk taken is followed by a pause of the stream, so the
  // supervisor's stdout pipe stays full and its writes go out in pieces.
  h.stdout.on('data', (c: Buffer) => {
    chunks.push(c);
    bytes += c.length;
    doneSeen += c.toString('latin1').split('"done":true').length - 1;
    h.stdout.pause();
    setTimeout(() => h.stdout.resume(), 2);
    if (doneSeen === 3 && !stopping) {
      stopping = true;
      h.kill('SIGTERM');
    }
  });
  const code = await new Promise<number | null>((resolve) => h.on('exit', (c) => resolve(c)));
  await new Promise((r) => (h.stdout.readableEnded ? r(null) : h.stdout.once('end', r)));
  assert.equal(code, 0);

  const text = Buffer.concat(chunks).toString('utf8');
  assert.equal(text.at(-1), '\n');
  const lines = text.slice(0, -1).split('\n');
  const parsed = lines.map((l, n) => {
    try {
      return JSON.parse(l) as Record<string, unknown>;
    } catch {
      assert.fail(`line ${n} is not whole JSON: ${l.slice(0, 120)}...${l.slice(-120)}`);
    }
  });
  for (const role of ['core', 'rest', 'gossip']) {
    const sizes = padSizes(role);
    const mine = parsed.filter((p) => p['child'] === role && p['i'] !== undefined);
    // Every line but the over-long one, in order, byte for byte.
    assert.deepEqual(
      mine.map((p) => p['i']),
      Array.from({ length: LINES_PER_CHILD }, (_, i) => i).filter((i) => i !== LONG_LINE_AT),
      role,
    );
    for (const p of mine) assert.equal(JSON.stringify(p) + '\n', line(role, p['i'] as number, sizes[p['i'] as number]!));
    const cut = parsed.filter((p) => p['msg'] === 'child log line cut' && p['role'] === role);
    assert.equal(cut.length, 1, `one cut report for ${role}`);
    assert.equal(cut[0]!['bytes'], Buffer.byteLength(line(role, LONG_LINE_AT, LONG_LINE_BYTES)) - 1);
    assert.match(String(cut[0]!['head']), new RegExp(`^\\{"child":"${role}","i":${LONG_LINE_AT},"pad":"f+$`));
    // Lines written while the child drained at shutdown were forwarded before the supervisor exited.
    assert.equal(parsed.filter((p) => p['child'] === role && p['draining'] !== undefined).length, 20, `${role} drain lines`);
  }
  assert.ok(parsed.some((p) => p['msg'] === 'stopped'), 'the supervisor stopped and flushed its output');
  const big = padSizes('core').filter((n) => n > 4096 && n < MAX_LINE_BYTES).length;
  console.log(`# supervisor/lines: ${lines.length} lines, ${(bytes / 1048576).toFixed(1)} MiB read; ${big} lines over 4 KiB per child`);
});

test('the supervisor killed: its children still finish their drain (a write to the lost pipe does not kill them)', { timeout: 20_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lines-'));
  const fixture = fileURLToPath(new URL('./lines-fixture.js', import.meta.url));
  const h = spawn(process.execPath, [fixture], { env: { ...process.env, LINES_ROLE: 'harness', LINES_MARK_DIR: dir }, stdio: ['ignore', 'pipe', 'inherit'] });
  let doneSeen = 0;
  h.stdout.on('data', (c: Buffer) => {
    doneSeen += c.toString('latin1').split('"done":true').length - 1;
    if (doneSeen === 3) h.kill('SIGKILL');
  });
  await new Promise((resolve) => h.on('exit', resolve));
  // The children see the IPC channel close, drain (writing 20 lines into the dead pipe),
  // then leave a mark each.
  const roles = ['core', 'gossip', 'rest'];
  const marked = (): boolean => roles.every((r) => existsSync(join(dir, r)));
  await new Promise<void>((resolve, reject) => {
    const w = watch(dir, () => marked() && finish());
    const timer = setTimeout(() => finish(new Error(`drain marks after 15 s: ${readdirSync(dir).join(', ') || 'none'}`)), 15_000);
    const finish = (e?: Error): void => {
      w.close();
      clearTimeout(timer);
      if (e) reject(e);
      else resolve();
    };
    if (marked()) finish();
  });
  assert.deepEqual(readdirSync(dir).sort(), roles);
});
