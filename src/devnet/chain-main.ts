/**
 * `npm run devnet:chain -- [--port N] [--host H] [--data FILE] [--initial-blocks N]
 * [--public] [--requests-per-hour N] [--burst N]`: starts the devnet chain alone and
 * prints its base URL (first stdout line). `--public` makes it behave like a public
 * endpoint: a request budget per client address answered 429 with Retry-After past it
 * (default 700 an hour, burst 10; either number given implies --public).
 */
import { PUBLIC_MODE_DEFAULTS, startDevnetChain, type PublicModeOptions } from './chain-server.js';
import { endQuietlyOnClosedOutput } from '../closed-output.js';

const USAGE =
  'usage: devnet:chain [--port N (3002; 0 = any)] [--host H] [--data FILE] [--initial-blocks N (101)] [--public] [--requests-per-hour N (700)] [--burst N (10)]';

function parseArgs(argv: string[]): { port: number; host: string; dataFile?: string; initialBlocks: number; publicMode?: PublicModeOptions } {
  const out = { port: 3002, host: '127.0.0.1', dataFile: undefined as string | undefined, initialBlocks: 101 };
  let publicMode: PublicModeOptions | undefined;
  const pub = (): PublicModeOptions => (publicMode ??= { ...PUBLIC_MODE_DEFAULTS });
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    const need = () => {
      if (v === undefined) throw new Error(`${a} needs a value`);
      i++;
      return v;
    };
    const count = (min: number, max: number): number => {
      const n = Number(need());
      if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${a} must be an integer from ${min} to ${max}`);
      return n;
    };
    if (a === '--port') out.port = Number(need());
    else if (a === '--host') out.host = need();
    else if (a === '--data') out.dataFile = need();
    else if (a === '--initial-blocks') out.initialBlocks = Number(need());
    else if (a === '--public') pub();
    else if (a === '--requests-per-hour') pub().requestsPerHour = count(1, 1_000_000_000);
    else if (a === '--burst') pub().burst = count(1, 1_000_000);
    else if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new Error('--port must be 0..65535');
  if (!Number.isInteger(out.initialBlocks) || out.initialBlocks < 0) throw new Error('--initial-blocks must be >= 0');
  return { ...out, publicMode };
}

async function main(): Promise<void> {
  let handle: { close(): Promise<void> } | null = null;
  endQuietlyOnClosedOutput(() => handle?.close());
  const args = parseArgs(process.argv.slice(2));
  const h = await startDevnetChain(args);
  handle = h;
  console.log(h.url);
  const mode = args.publicMode ? `, public mode: ${args.publicMode.requestsPerHour} requests an hour per address, burst ${args.publicMode.burst}` : '';
  console.error(`devnet chain: height ${h.chain.height}, faucet ${h.chain.faucetAddress}${args.dataFile ? `, data ${args.dataFile}` : ''}${mode}`);
  const stop = () => {
    void h.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e: unknown) => {
  console.error(String((e as Error)?.message ?? e));
  process.exit(1);
});
