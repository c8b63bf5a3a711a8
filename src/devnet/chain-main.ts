/**
 * `npm run devnet:chain -- [--port N] [--host H] [--data FILE] [--initial-blocks N]`:
 * starts the devnet chain alone and prints its base URL (first stdout line).
 */
import { startDevnetChain } from './chain-server.js';
import { endQuietlyOnClosedOutput } from '../cli/output.js';

function parseArgs(argv: string[]): { port: number; host: string; dataFile?: string; initialBlocks: number } {
  const out = { port: 3002, host: '127.0.0.1', dataFile: undefined as string | undefined, initialBlocks: 101 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    const need = () => {
      if (v === undefined) throw new Error(`${a} needs a value`);
      i++;
      return v;
    };
    if (a === '--port') out.port = Number(need());
    else if (a === '--host') out.host = need();
    else if (a === '--data') out.dataFile = need();
    else if (a === '--initial-blocks') out.initialBlocks = Number(need());
    else if (a === '--help' || a === '-h') {
      console.log('usage: devnet:chain [--port N (3002; 0 = any)] [--host H] [--data FILE] [--initial-blocks N (101)]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new Error('--port must be 0..65535');
  if (!Number.isInteger(out.initialBlocks) || out.initialBlocks < 0) throw new Error('--initial-blocks must be >= 0');
  return out;
}

async function main(): Promise<void> {
  let handle: { close(): Promise<void> } | null = null;
  endQuietlyOnClosedOutput(() => handle?.close());
  const args = parseArgs(process.argv.slice(2));
  const h = await startDevnetChain(args);
  handle = h;
  console.log(h.url);
  console.error(`devnet chain: height ${h.chain.height}, faucet ${h.chain.faucetAddress}${args.dataFile ? `, data ${args.dataFile}` : ''}`);
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
