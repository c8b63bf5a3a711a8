/**
 * `svc sink postgres ...`: the command line of the PostgreSQL sink (src/sink/sink.ts,
 * docs/INDEXING.md). Kept apart from the other svc commands: it runs until stopped.
 */
import { parseArgs } from 'node:util';
import { ClientError } from '@svc-node/client/errors';
import { PostgresSink, parseContractArg } from './sink.js';

export const SINK_USAGE = `usage: svc sink postgres (--contract [ALIAS=]ID ... | --all) [options]

Follows the node's live feed and writes blocks, events and call statuses of the followed
contracts into PostgreSQL, exactly once and reorg-safe (docs/INDEXING.md). Runs until
SIGINT or SIGTERM; a restart resumes where the database stands.

options:
  --node URL          node REST URL (env SVC_NODE_URL, default http://127.0.0.1:8080)
  --database URL      postgres://user:password@host:port/dbname (env SVC_SINK_DATABASE_URL;
                      unset: the PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE variables)
  --schema NAME       PostgreSQL schema to write (default svc)
  --contract [ALIAS=]ID  follow this contract (repeatable); ALIAS prefixes its views
                      (default: the contract's name in snake_case)
  --all               follow every contract the node holds, and new ones as they appear
  -h, --help`;

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

export async function runSink(argv: string[], environ: NodeJS.ProcessEnv, write: (line: string) => void, signal?: AbortSignal): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { node: { type: 'string' }, database: { type: 'string' }, schema: { type: 'string' }, contract: { type: 'string', multiple: true }, all: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw new ClientError('bad_argument', (e as Error).message.split('\n')[0]!);
  }
  const f = parsed.values;
  if (f.help) {
    write(SINK_USAGE);
    return;
  }
  const env = (k: string): string | undefined => (environ[k] === '' ? undefined : environ[k]);
  if (parsed.positionals[0] !== 'postgres' || parsed.positionals.length !== 1) throw new ClientError('bad_argument', 'sink takes one target: svc sink postgres (svc sink --help)');
  if (!f.all && !f.contract?.length) throw new ClientError('bad_argument', 'sink postgres needs --contract [ALIAS=]ID (repeatable) or --all');
  if (f.all && f.contract?.length) throw new ClientError('bad_argument', 'give --contract or --all, not both');
  const schema = f.schema ?? 'svc';
  if (!SCHEMA.test(schema)) throw new ClientError('bad_argument', `--schema ${schema}: a schema name is 1 to 63 of a-z 0-9 _ (not starting with a digit)`);
  const nodeUrl = f.node ?? env('SVC_NODE_URL') ?? 'http://127.0.0.1:8080';
  if (!/^https?:\/\/[^\s/]+/.test(nodeUrl)) throw new ClientError('bad_argument', `--node ${nodeUrl}: expected an http:// or https:// URL`);
  const databaseUrl = f.database ?? env('SVC_SINK_DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) throw new ClientError('bad_argument', '--database: expected a postgres:// URL');
  const contracts = f.all ? ('all' as const) : f.contract!.map(parseContractArg);
  if (contracts !== 'all' && new Set(contracts.map((c) => c.id)).size !== contracts.length) throw new ClientError('bad_argument', 'a contract is given twice');
  await new PostgresSink({ nodeUrl, ...(databaseUrl ? { databaseUrl } : {}), schema, contracts, log: write, ...(signal ? { signal } : {}) }).run();
}
