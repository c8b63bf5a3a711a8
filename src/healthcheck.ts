/**
 * Docker's HEALTHCHECK: asks the node's own REST address, as configured
 * (config.toml and SVC_* variables, read the way the node reads them), for GET /ready.
 * Exit 0 when ready, 1 otherwise, with one line saying why. A wildcard listen address
 * (0.0.0.0, ::) is asked on loopback.
 */
import { ConfigError, loadConfig } from './config/options.js';
import { formatAddress } from './supervisor/address.js';

/** Below Docker's --timeout (5 s in the Dockerfile), above /ready's own 2 s core deadline. */
const PROBE_TIMEOUT_MS = 4_000;

let config;
try {
  config = loadConfig();
} catch (e) {
  process.stdout.write(`${e instanceof ConfigError ? e.message : String(e)}\n`);
  process.exit(1);
}
const { host, port } = config.restAddress;
const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
const url = `http://${formatAddress(target, port)}/ready`;
try {
  const r = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
  const body = await r.text();
  process.stdout.write(`${url}: ${r.status} ${body.slice(0, 500)}\n`);
  process.exit(r.status === 200 ? 0 : 1);
} catch (e) {
  process.stdout.write(`${url}: ${(e as Error).message}\n`);
  process.exit(1);
}
