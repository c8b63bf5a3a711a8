/**
 * Deterministic simulation of several nodes (issues 18 and 26): the same payloads reach
 * each node in another order and by other paths, while the chain grows, reorganises up to
 * 150 blocks deep and nodes crash and restart. Nodes that read every block run beside
 * light nodes that follow headers and learn where payloads confirm or are dropped from
 * the Bitcoin evidence that comes with them, before, during or after their blocks, and
 * lying peers send forged evidence and header runs, each refused bad_evidence without
 * effect. Afterwards every node agrees with every other and with a reference model of
 * PROTOCOL sections 4 and 5 on the state root at every height, every call's status,
 * every event and the evidence it serves (test/sim/lib/run.ts, lies.ts).
 *
 * SIM_SEEDS=N runs N seeds (default 40: CI's .ci/run also runs 600 more after the
 * suite); SIM_SEED=S replays one seed exactly, as printed when it fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSource } from '../../src/compiler/index.js';
import { configureLogging } from '../../src/log.js';
import { fixturesDir } from '../helpers/paths.js';
import { runSeed } from './lib/run.js';
import type { Artifact } from '../helpers/sim-world.js';

/**
 * Seeds per `npm test` run: about 1.2 s each alone on 2 cores since light nodes and lying
 * peers joined the worlds (1.6 s beside the rest of the suite). With 60 the suite took
 * 566-581 s of its 10 minutes; 40 leave room. CI adds a sweep of 600 more.
 */
const DEFAULT_SEEDS = 40;

test('convergence: every node, light or reading blocks, reaches the model\'s roots, statuses and events, whatever the arrival order and whatever lying peers send', async () => {
  // Halts are errors: keep them, drop the info lines of hundreds of writers.
  const errors: string[] = [];
  // SIM_TRACE=1 also shows the writers' warnings (rewinds, re-derivations) as they come.
  const trace = process.env['SIM_TRACE'] !== undefined;
  configureLogging({ filter: trace ? 'warn' : 'error', sink: (line) => (trace ? process.stderr.write(`sim: log ${line}\n`) : errors.push(line)) });
  const file = join(fixturesDir, 'contracts', 'counter.svc');
  const compiled = compileSource(readFileSync(file, 'utf8'), file);
  assert.ok(compiled.ok);
  const artifact = compiled.artifact as unknown as Artifact;
  const one = process.env['SIM_SEED'];
  const seeds = one !== undefined ? [Number(one)] : Array.from({ length: Number(process.env['SIM_SEEDS'] ?? DEFAULT_SEEDS) }, (_, i) => i + 1);
  const start = Number(process.env['SIM_FIRST_SEED'] ?? 0);
  for (const s of seeds) {
    const seed = s + start;
    const problems = await runSeed(seed, artifact, { steps: 90, deepEvery: 40 }).catch((e: Error) => [`threw ${e.name}: ${e.message}\n${e.stack ?? ''}`]);
    if (problems.length > 0) {
      assert.fail(`seed ${seed} diverged (replay: SIM_SEED=${seed} node --test dist/test/sim/convergence.test.js):\n${problems.join('\n')}\n${errors.slice(-5).join('\n')}`);
    }
  }
});
