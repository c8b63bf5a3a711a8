/**
 * The node. No subcommands: configuration (config.toml, SVC_* variables) fully
 * determines behaviour (SERVICE-SPEC section 1).
 */
import { ConfigError, loadConfig, secretsOf } from './config/options.js';
import { configureLogging, logger, registerSecret } from './log.js';
import { Supervisor } from './supervisor/supervisor.js';
import { BindError } from './supervisor/address.js';
import { makeIdentity } from './gossip/identity.js';
import { describeError } from '@svc-node/protocol/errors';

let config;
try {
  config = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    process.stderr.write(e.message + '\n');
    process.exit(2);
  }
  throw e;
}
configureLogging({ filter: config.logFilter, process: 'supervisor' });
for (const s of secretsOf(config)) registerSecret(s);
const identity = makeIdentity(config.gossipPrivateKey);
registerSecret(Buffer.from(identity.seed).toString('hex'));

let exiting = false;
/**
 * The node cannot run (an address is taken, the database cannot be opened): one error
 * line saying why, the children stopped, exit 1. Not retried here: a supervisor above
 * (systemd, Docker's restart policy) decides, with its own backoff.
 */
const failed = (e: Error): void => {
  if (exiting) return;
  exiting = true;
  const fields: Record<string, unknown> = e instanceof BindError ? { key: e.key, address: e.address, errno: e.errno } : {};
  logger('supervisor').error(`${supervisor.started ? 'stopping' : 'startup failed'}: ${describeError(e)}`, fields);
  void supervisor.stop().finally(() => process.exit(1));
};
const supervisor = new Supervisor(config, identity, {}, failed);
const shutdown = (signal: string): void => {
  if (exiting) return;
  exiting = true;
  if (signal === 'disconnect') logger('supervisor').info('parent process gone; stopping');
  else logger('supervisor').info('signal received', { signal });
  // Exit 0 only for a clean stop: a child killed at the deadline (its database perhaps
  // not closed) must show in the exit code that Docker and systemd report.
  supervisor.stop().then(
    (clean) => process.exit(clean ? 0 : 1),
    () => process.exit(1),
  );
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
// Started with an IPC channel (npm run devnet gives one): the channel closes when the parent
// is gone, even by SIGKILL, and the node stops as on SIGTERM instead of outliving it.
if (process.channel) process.on('disconnect', () => shutdown('disconnect'));
supervisor.start().catch(failed);
