/**
 * Exclusive listening addresses. uWebSockets.js listens with SO_REUSEPORT by
 * default: a second node started on a REST address another one serves bound anyway, and
 * the kernel spread the connections over both. Every listener of the node is exclusive
 * now (the REST front asks uWS for LIBUS_LISTEN_EXCLUSIVE_PORT; node:net and gRPC never
 * set SO_REUSEPORT), and the supervisor and `npm run devnet` check their addresses with a
 * plain exclusive bind before touching anything, so a busy address is reported as one
 * line naming the key, the address and the cause.
 */
import { createServer } from 'node:net';

/** What an operator reads for the errno of a failed bind. */
const CAUSES: Record<string, string> = {
  EADDRINUSE: 'address already in use (another process listens there)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'address not available on this host (no interface has it)',
  ENOTFOUND: 'host name does not resolve',
  EAI_AGAIN: 'host name does not resolve (temporary DNS failure)',
};

export class BindError extends Error {
  constructor(
    /** The configuration key that names the address ("rest_address", "bind_address"). */
    readonly key: string,
    /** HOST:PORT as configured. */
    readonly address: string,
    /** Errno code, e.g. EADDRINUSE. */
    readonly errno: string,
  ) {
    super(`cannot listen on ${key} ${address}: ${causeOf(errno)}`);
    this.name = 'BindError';
  }
}

export function causeOf(errno: string): string {
  return `${CAUSES[errno] ?? 'bind failed'} (${errno})`;
}

export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Binds `host:port` exclusively and closes it again: null when the address is free, else
 * the errno. Port 0 always succeeds (the kernel picks a free port when the real listener
 * binds). A check, not a reservation: the listener itself is exclusive too, so an address
 * taken between the check and the bind still fails, at the listener.
 */
export function probeListen(host: string, port: number): Promise<string | null> {
  if (port === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'EUNKNOWN'));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}

/** Throws a BindError for the first of `addresses` that cannot be bound now. */
export async function checkAddresses(addresses: { key: string; host: string; port: number }[]): Promise<void> {
  for (const a of addresses) {
    const errno = await probeListen(a.host, a.port);
    if (errno) throw new BindError(a.key, formatAddress(a.host, a.port), errno);
  }
}
