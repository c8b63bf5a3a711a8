/**
 * What the documentation says about the node's own names and answers, checked against
 * them: the node_status.gossip counters GOSSIP.md lists, proto/svc.proto's word on
 * malformed evidence (per payload, as the node answers it), and the devnet's reorg
 * control in docs/CLI.md. A renamed counter or a changed answer fails here until the
 * document follows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { zeroCounters } from '../src/messages/gossip.js';
import { repoRoot } from './helpers/paths.js';

const read = (path: string): string => readFileSync(join(repoRoot, path), 'utf8');

test('GOSSIP.md lists every node_status.gossip counter by its name, and no other', () => {
  const doc = read('docs/GOSSIP.md');
  const table = doc.slice(doc.indexOf('| `node_status.gossip` counter |'));
  const names = [...table.slice(0, table.indexOf('\n\n')).matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual(names.sort(), Object.keys(zeroCounters()).sort());
});

test('proto/svc.proto: malformed evidence is refused per payload (error_code bad_request), as sections 4 and 7 both say', () => {
  const proto = read('proto/svc.proto');
  const section = (n: number): string => proto.slice(proto.indexOf(`// ${n}. `), proto.indexOf(`// ${n + 1}. `));
  const s7 = section(7);
  assert.doesNotMatch(s7, /INVALID_ARGUMENT/, 'section 7 does not answer a payload field by the call status');
  assert.match(s7, /error_code "bad_request"/);
  assert.match(section(4), /Payloads are answered one by one, never by the call's status/);
});

test('docs/CLI.md documents POST /devnet/reorg with every field the devnet takes', () => {
  const cli = read('docs/CLI.md');
  const at = cli.indexOf('`POST /devnet/reorg');
  assert.ok(at > 0, 'POST /devnet/reorg is documented');
  const server = read('src/devnet/chain-server.ts');
  const handler = server.slice(server.indexOf("if (what === 'reorg')"), server.indexOf("if (typeof body.address"));
  const fields = [...handler.matchAll(/body\.([a-z]+)/g)].map((m) => m[1]!);
  assert.deepEqual([...new Set(fields)].sort(), ['blocks', 'depth', 'drop', 'txids', 'txs']);
  for (const f of fields) assert.ok(cli.slice(at, at + 1500).includes(`"${f}"`), `field ${f} documented`);
});
