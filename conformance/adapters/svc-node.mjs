#!/usr/bin/env node
// svc-node's command-line adapter for the vector runner (conformance/README.md, "Adapter
// protocol"): reads one JSON case per line on stdin ({op, id, input}), writes one JSON
// answer per line on stdout, in order: {id, output} with svc-node's answer, {id,
// unsupported: true} for an operation it does not know, {id, error} when the input is
// malformed. Needs the built node (npm run build): the answers come from dist/.
import { createInterface } from 'node:readline';

const { answerAsync, OPERATIONS } = await import('../../dist/conformance/adapters/svc-node-answers.js');
const { initEcc } = await import('@svc-node/protocol/bitcoin');
initEcc();
const known = new Set(OPERATIONS);

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === '') continue;
  let reply;
  let id = null;
  try {
    const c = JSON.parse(line);
    id = c.id ?? null;
    reply = known.has(c.op) ? { id, output: (await answerAsync(c.op, c.input)).output } : { id, unsupported: true };
  } catch (e) {
    reply = { id, error: e instanceof Error ? e.message : String(e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
