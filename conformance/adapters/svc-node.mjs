#!/usr/bin/env node
// svc-node's command-line adapter for the vector runner (conformance/README.md, "Adapter
// protocol"): reads one JSON case per line on stdin ({op, id, input}), writes one JSON
// answer per line on stdout, in order: {id, output} with svc-node's answer, {id,
// unsupported: true} for an operation it does not know, {id, error} when the input is
// malformed. Needs the built node (npm run build): the answers come from dist/.
//
// For the mutation run (conformance/README.md, "The mutation run") only: SVC_CONFORMANCE_DIST names
// another compiled tree to answer from (the mutated copy), and a line {op: "_mutation",
// id, input: {active, trace}} switches the active mutant of that tree between cases and
// answers {id, output: {hits}}: the mutants reached since the previous such line. Other
// adapters need not know either.
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// The mutated tree holds its own copy of @svc-node/protocol (node_modules/ beside its dist/),
// so the protocol is imported as that tree resolves it, never from this file's place.
const dist = process.env.SVC_CONFORMANCE_DIST ? pathToFileURL(resolve(process.env.SVC_CONFORMANCE_DIST) + '/').href : new URL('../../dist/', import.meta.url).href;
const { answerAsync, OPERATIONS } = await import(new URL('conformance/adapters/svc-node-answers.js', dist).href);
const { initEcc } = await import(pathToFileURL(createRequire(new URL('conformance/adapters/svc-node-answers.js', dist)).resolve('@svc-node/protocol/bitcoin')).href);
initEcc();
const known = new Set(OPERATIONS);

/** The `_mutation` control line: present only in a mutated tree, whose files share globalThis.__svcMutation. */
function mutationControl(input) {
  const state = globalThis.__svcMutation;
  if (!state) return null;
  const hits = state.hits === null ? [] : [...state.hits];
  state.active = input.active;
  state.hits = input.trace ? new Set() : null;
  return { hits };
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  let reply;
  let id = null;
  try {
    const c = JSON.parse(line);
    id = c.id ?? null;
    const control = c.op === '_mutation' ? mutationControl(c.input) : undefined;
    if (control !== undefined) reply = control === null ? { id, unsupported: true } : { id, output: control };
    else reply = known.has(c.op) ? { id, output: (await answerAsync(c.op, c.input)).output } : { id, unsupported: true };
  } catch (e) {
    reply = { id, error: e instanceof Error ? e.message : String(e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
