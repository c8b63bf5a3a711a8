/**
 * The settings of `npm run devnet`, checked before anything starts with the node's own
 * configuration code (src/config/options.ts): the node's environment as the devnet will
 * give it is loaded and validated by `loadConfig`, SVC_DEVNET_PORT is read with the node's
 * port parser, and a bad value is one `config error:` line, as the node prints for it.
 */
import { join } from 'node:path';
import { ConfigError, addressesClash, formatHostPort, loadConfig, portFromEnv, type HostPort } from '../config/options.js';

/** Defaults: the chain on 3002, the node's REST and gRPC on loopback at their usual ports. */
const DEFAULT_CHAIN_PORT = 3002;
const DEFAULT_REST_ADDRESS = '127.0.0.1:8080';
const DEFAULT_BIND_ADDRESS = '127.0.0.1:50051';

export interface DevnetSettings {
  chainPort: number;
  restAddress: HostPort;
  bindAddress: HostPort;
  /** The node's environment for a chain at `chainUrl` and a database at `dbPath`. */
  nodeEnv(chainUrl: string, dbPath: string): NodeJS.ProcessEnv;
}

function nodeEnv(env: NodeJS.ProcessEnv, repoRoot: string, chainUrl: string, dbPath: string): NodeJS.ProcessEnv {
  return {
    ...env,
    SVC_CONFIG: join(repoRoot, 'config.toml'),
    SVC_ESPLORA_URL: chainUrl,
    SVC_DB_PATH: dbPath,
    SVC_REST_ADDRESS: env['SVC_REST_ADDRESS'] ?? DEFAULT_REST_ADDRESS,
    SVC_BIND_ADDRESS: env['SVC_BIND_ADDRESS'] ?? DEFAULT_BIND_ADDRESS,
    // the devnet mines on demand: by default the node looks for blocks often and its budget
    // never holds it back; set, these are the node's like any other SVC_* setting (e.g. a
    // public endpoint's budget, tried against the devnet chain's public mode)
    SVC_BLOCK_CHECK_INTERVAL_S: env['SVC_BLOCK_CHECK_INTERVAL_S'] ?? '0.2',
    SVC_ESPLORA_REQUESTS_PER_HOUR: env['SVC_ESPLORA_REQUESTS_PER_HOUR'] ?? '1000000000',
    SVC_ESPLORA_BURST: env['SVC_ESPLORA_BURST'] ?? '100000',
    SVC_ESPLORA_MAX_CONCURRENT: env['SVC_ESPLORA_MAX_CONCURRENT'] ?? '32',
    RUST_LOG: env['RUST_LOG'] ?? 'warn',
  };
}

/** Reads and checks the devnet's settings; throws ConfigError with the one line to print. */
export function devnetSettings(env: NodeJS.ProcessEnv, repoRoot: string): DevnetSettings {
  const chainPort = portFromEnv(env, 'devnet chain port', 'SVC_DEVNET_PORT', DEFAULT_CHAIN_PORT);
  const config = loadConfig({ env: nodeEnv(env, repoRoot, `http://127.0.0.1:${chainPort || DEFAULT_CHAIN_PORT}`, join(repoRoot, 'data', 'devnet', 'db')) });
  const chain: HostPort = { host: '127.0.0.1', port: chainPort };
  // the devnet talks to its node's REST and prints its URL: it needs the port it will serve on
  if (config.restAddress.port === 0) {
    throw new ConfigError(`config error: rest_address from ${config.sources['rest_address']}: the devnet needs a fixed port (it prints the address to use), got ${formatHostPort(config.restAddress)}`);
  }
  for (const [key, a] of [['rest_address', config.restAddress], ['bind_address', config.bindAddress]] as const) {
    if (addressesClash(chain, a)) {
      throw new ConfigError(`config error: devnet chain port from ${env['SVC_DEVNET_PORT'] === undefined ? 'its default' : 'SVC_DEVNET_PORT'} (${chainPort}) is also ${key} from ${config.sources[key]} (${formatHostPort(a)}): each needs its own port`);
    }
  }
  return { chainPort, restAddress: config.restAddress, bindAddress: config.bindAddress, nodeEnv: (url, db) => nodeEnv(env, repoRoot, url, db) };
}
