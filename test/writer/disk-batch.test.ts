/**
 * The packed write batch between the writer thread and the disk thread: what the disk
 * thread unpacks is exactly what the writer put and deleted, in order, across the
 * buffer's growth, with empty values and keys of every length.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PackedBatch, forEachPacked } from '../../src/writer/disk-batch.js';

test('a packed batch unpacks to the same operations in the same order, across growth', () => {
  const b = new PackedBatch();
  const want: string[] = [];
  // 3,000 operations of up to ~600 bytes: the 16 KiB first buffer doubles several times.
  for (let i = 0; i < 3000; i++) {
    const k = Buffer.alloc(1 + (i % 70), i & 0xff);
    if (i % 7 === 3) {
      b.del(k);
      want.push(`del ${k.toString('hex')}`);
    } else {
      const v = Buffer.alloc((i * 13) % 530, (i * 31) & 0xff);
      b.put(k, v);
      want.push(`put ${k.toString('hex')} ${v.toString('hex')}`);
    }
  }
  assert.equal(b.length, 3000);
  const { buf, bytes } = b.take();
  assert.ok(buf instanceof ArrayBuffer && bytes <= buf.byteLength);
  const got: string[] = [];
  forEachPacked(
    Buffer.from(buf, 0, bytes),
    (k, v) => got.push(`put ${k.toString('hex')} ${v.toString('hex')}`),
    (k) => got.push(`del ${k.toString('hex')}`),
  );
  assert.deepEqual(got, want);
});

test('a corrupt packed batch is refused, not misread', () => {
  const b = new PackedBatch();
  b.put(Buffer.from('k'), Buffer.from('v'));
  const { buf, bytes } = b.take();
  const bad = Buffer.from(buf, 0, bytes);
  bad[0] = 9;
  assert.throws(() => forEachPacked(bad, () => undefined, () => undefined), /unknown operation 9 at byte 0/);
});
