// A port on 127.0.0.1 that nobody listens on right now, for the out-of-repo scripts (the test
// backend of the install tests, the temporary PostgreSQL). Another process may take it before
// the caller binds it: callers that start a server on it retry or fail with a clear message.
import net from 'node:net';

/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
