/*
 * Child process of idleConnections.test.ts: talks to the backend URL in argv[2] the way the
 * broker's own session does (request, notification, event stream, DELETE), prints `done` and
 * then has nothing left to do. Idle keep-alive connections must not keep it alive: it has to
 * exit by itself while the server still holds those connections open.
 */
import { HttpBackendTransport } from '../HttpBackendTransport';
import { LegacyChannel } from '../LegacyChannel';

async function main() {
  const channel = new LegacyChannel(
    { name: 'exit-check', url: process.argv[2], headers: {} },
    HttpBackendTransport.shared,
    5000,
  );
  const session = { id: 'exit-session', protocolVersion: '2025-06-18' };
  await channel.request({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, session);
  await channel.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  const cycle = new AbortController();
  const stream = await channel.openEventStream(session, cycle.signal);
  if (stream === 'not-supported') throw new Error('expected an event stream');
  cycle.abort(); // how BackendConnection.close() ends its stream
  await channel.endSession(session);
  process.stdout.write('done\n');
}

main().catch(error => {
  process.stderr.write(`${error}\n`);
  process.exit(1);
});
