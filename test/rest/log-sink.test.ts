/**
 * The REST log sink (src/rest/log-sink.ts) when stdout's reader stalls: access-log lines
 * beyond STALL_BYTES buffered are dropped and counted, other lines are kept, and one
 * warning with the count follows once the stream drains. In process, with a stream whose
 * reader is stopped and restarted by the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { batchingSink } from '../../src/rest/log-sink.js';

/** A stream whose reader is stalled until `resume()`; it records what was written. */
class StalledReader extends Writable {
  written: string[] = [];
  private pending: (() => void)[] = [];
  private stalled = true;

  constructor() {
    super({ highWaterMark: 16 * 1024 });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.written.push(chunk.toString('utf8'));
    if (this.stalled) this.pending.push(cb);
    else cb();
  }

  resume(): void {
    this.stalled = false;
    for (const cb of this.pending.splice(0)) cb();
  }

  lines(): string[] {
    return this.written.join('').split('\n').filter((l) => l.length > 0);
  }
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('stalled stdout: access lines beyond the cap are dropped and counted; other lines kept; one warning on drain', async () => {
  const out = new StalledReader();
  const CAP = 64 * 1024;
  const s = batchingSink(1, { stream: out, stallBytes: CAP, warning: (n) => `WARN dropped=${n}` });
  const line = (i: number): string => `{"msg":"request","n":${i},"pad":"${'x'.repeat(180)}"}`;
  const N = 20_000; // ~4 MB of access lines against a 64 KiB cap
  for (let i = 0; i < N; i++) {
    s.access(line(i));
    if (i % 500 === 0) {
      s.sink(`{"msg":"kept ${i}"}`);
      await turn(); // let the batch flush into the stalled stream
    }
  }
  s.flush();
  // Buffered: at most the cap plus one batch (256 KiB) plus the kept lines.
  assert.ok(out.writableLength <= CAP + 256 * 1024 + 10_000, `buffered ${out.writableLength} bytes`);
  const dropped = s.dropped;
  assert.ok(dropped > N / 2, `most access lines dropped: ${dropped}`);
  out.resume();
  await turn();
  await turn();
  s.flush();
  await turn();
  const lines = out.lines();
  const access = lines.filter((l) => l.startsWith('{"msg":"request"'));
  const kept = lines.filter((l) => l.startsWith('{"msg":"kept'));
  const warnings = lines.filter((l) => l.startsWith('WARN'));
  assert.equal(access.length + dropped, N, 'every access line either written or counted');
  assert.equal(kept.length, N / 500, 'no other line dropped');
  assert.deepEqual(warnings, [`WARN dropped=${dropped}`], 'one warning, with the count');
  assert.equal(s.dropped, 0, 'the count restarts after the warning');
  // Writing resumed: access lines flow again, with no second warning.
  for (let i = 0; i < 100; i++) s.access(line(N + i));
  s.flush();
  await turn();
  assert.equal(out.lines().filter((l) => l.startsWith('{"msg":"request"')).length, access.length + 100);
  assert.equal(out.lines().filter((l) => l.startsWith('WARN')).length, 1);
});

test('a reader that keeps up: nothing dropped, no warning', async () => {
  const out = new StalledReader();
  out.resume();
  const s = batchingSink(1, { stream: out, stallBytes: 64 * 1024, warning: (n) => `WARN dropped=${n}` });
  for (let i = 0; i < 5_000; i++) {
    s.access(`{"msg":"request","n":${i}}`);
    if (i % 100 === 0) await turn();
  }
  s.flush();
  await turn();
  assert.equal(s.dropped, 0);
  assert.equal(out.lines().length, 5_000);
});
