// A node:test reporter that records each test file's wall time, for scripts/run-tests.mjs
// (which prints the slowest files after a run). Written as one JSON object
// { "<path under dist/test>": milliseconds } to the reporter's destination.
// Node 20 reports each file as a test of its own (name = the file's path) with its
// duration; where a runner does not, the file's time is the span from its first event to
// its last.
import { relative } from 'node:path';

const testRoot = new URL('../dist/test/', import.meta.url).pathname;

export default async function* fileTimes(source) {
  const own = new Map();
  const first = new Map();
  const last = new Map();
  for await (const event of source) {
    const file = event.data?.file;
    if (!file) continue;
    const now = performance.now();
    if (!first.has(file)) first.set(file, now);
    last.set(file, now);
    if (event.type === 'test:complete' && event.data.name === file && event.data.details?.duration_ms !== undefined) own.set(file, event.data.details.duration_ms);
  }
  const times = {};
  for (const file of first.keys()) times[relative(testRoot, file)] = Math.round(own.get(file) ?? last.get(file) - first.get(file));
  yield JSON.stringify(times) + '\n';
}
