/**
 * Exclusive listening addresses (issue 20): the checks and listeners the node uses, on
 * real sockets, and the supervisor stopping (not restarting) a child that cannot bind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { App, us_listen_socket_close, us_socket_local_port, type us_listen_socket } from 'uWebSockets.js';
import { BindError, checkAddresses, probeListen } from '../../src/supervisor/address.js';
import { RestServer } from '../../src/rest/http.js';
import { bind } from '../../src/gossip/server.js';
import { describeError } from '@svc-node/protocol/errors';
import { Supervisor } from '../../src/supervisor/supervisor.js';
import { loadConfig } from '../../src/config/options.js';
import { makeIdentity } from '../../src/gossip/identity.js';
import { renderFamilies } from '../../src/supervisor/process-metrics.js';
import { repoRoot } from '../helpers/paths.js';

function listenNet(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

test('a taken address is reported with its errno; a free one and port 0 pass', async () => {
  const { server, port } = await listenNet();
  try {
    assert.equal(await probeListen('127.0.0.1', port), 'EADDRINUSE');
    assert.equal(await probeListen('127.0.0.1', 0), null);
    await assert.rejects(checkAddresses([{ key: 'bind_address', host: '127.0.0.1', port: 0 }, { key: 'rest_address', host: '127.0.0.1', port }]), (e: unknown) => {
      assert.ok(e instanceof BindError);
      assert.equal(e.key, 'rest_address');
      assert.equal(e.address, `127.0.0.1:${port}`);
      assert.equal(e.message, `cannot listen on rest_address 127.0.0.1:${port}: address already in use (another process listens there) (EADDRINUSE)`);
      return true;
    });
  } finally {
    server.close();
  }
  // Free again once closed.
  assert.equal(await probeListen('127.0.0.1', port), null);
});

test('the REST listener is exclusive: a second one on the same port fails with a BindError, and so does a port held by uWS with SO_REUSEPORT', async () => {
  const first = new RestServer([]);
  const port = await first.listen('127.0.0.1', 0);
  try {
    // uWS's default listen sets SO_REUSEPORT, under which two nodes shared one port.
    await assert.rejects(new RestServer([]).listen('127.0.0.1', port), (e: unknown) => e instanceof BindError && e.key === 'rest_address' && e.errno === 'EADDRINUSE');
    // And the node's check refuses it before anything starts.
    assert.equal(await probeListen('127.0.0.1', port), 'EADDRINUSE');
  } finally {
    await first.drain(0);
  }
  // Another program listening with uWS's default (SO_REUSEPORT): the node does not join it.
  const other = App();
  const sock = await new Promise<us_listen_socket>((resolve, reject) => other.listen('127.0.0.1', 0, (s) => (s ? resolve(s) : reject(new Error('listen failed')))));
  const otherPort = us_socket_local_port(sock as never);
  try {
    await assert.rejects(new RestServer([]).listen('127.0.0.1', otherPort), (e: unknown) => e instanceof BindError && e.errno === 'EADDRINUSE');
  } finally {
    us_listen_socket_close(sock);
    other.close();
  }
});

test('the gossip listener on a taken address fails with a BindError naming bind_address', async () => {
  const { server, port } = await listenNet();
  const grpcServer = new grpc.Server();
  try {
    await assert.rejects(bind(grpcServer, '127.0.0.1', port), (e: unknown) => {
      assert.ok(e instanceof BindError, String(e));
      assert.equal(e.key, 'bind_address');
      assert.equal(e.errno, 'EADDRINUSE');
      return true;
    });
  } finally {
    grpcServer.forceShutdown();
    server.close();
  }
});

test('failures that are not Error instances are described by their message, never "[object Object]"', () => {
  assert.equal(describeError(new Error('disk full')), 'disk full');
  assert.equal(describeError({ message: 'IO error: lock /data/LOCK' }), 'IO error: lock /data/LOCK');
  assert.equal(describeError({ code: 'EACCES' }), '{"code":"EACCES"}');
  assert.equal(describeError({}), 'unknown error ([object Object])');
  assert.equal(describeError('plain'), 'plain');
});

test('a child that cannot bind stops the node at startup: start() rejects with the BindError and nothing is restarted', async () => {
  const config = loadConfig({ path: join(repoRoot, 'test/fixtures/empty-config.toml'), env: { SVC_REST_ADDRESS: '127.0.0.1:0', SVC_BIND_ADDRESS: '127.0.0.1:0' } });
  const fixture = new URL('./bind-fixture.js', import.meta.url);
  const supervisor = new Supervisor(config, makeIdentity(null), { core: fixture, rest: fixture, gossip: fixture });
  try {
    await assert.rejects(supervisor.start(), (e: unknown) => e instanceof BindError && e.key === 'rest_address' && e.address === '127.0.0.1:8080' && e.errno === 'EADDRINUSE');
    assert.equal(supervisor.started, false);
    assert.equal(supervisor.serving().rest, false);
    const text = renderFamilies(await supervisor.gatherMetrics());
    assert.match(text, /^svc_child_restarts_total\{role="rest"\} 0$/m);
    assert.match(text, /^svc_build_info\{version="[^"]+",node_version="v\d+[^"]*",role="supervisor"\} 1$/m);
    assert.match(text, /^svc_child_up\{role="core"\} 1$/m);
  } finally {
    await supervisor.stop();
  }
});
