/**
 * The node. No subcommands: configuration (config.toml, SVC_* variables) fully
 * determines behaviour (SERVICE-SPEC section 1).
 */
import { ConfigError, loadConfig, secretsOf } from './config/options.js';
import { configureLogging, logger, registerSecret } from './log.js';
import { Supervisor } from './supervisor/supervisor.js';
import { makeIdentity } from './gossip/identity.js';

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

const supervisor = new Supervisor(config, identity);
let exiting = false;
const shutdown = (signal: string): void => {
  if (exiting) return;
  exiting = true;
  logger('supervisor').info('signal received', { signal });
  supervisor.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
supervisor.start().catch((e: Error) => {
  logger('supervisor').error('startup failed', { error: e });
  void supervisor.stop().finally(() => process.exit(1));
});
