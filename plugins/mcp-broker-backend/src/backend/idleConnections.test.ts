/*
 * Idle keep-alive connections to backends must not keep the broker's process alive at
 * shutdown. A real child process (testing/idleConnectionsExit.ts) uses the backend client
 * against a server here that keeps idle connections open for a minute; the child must exit on
 * its own right after its work, while those connections are still open.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

describe('idle keep-alive connections to a backend', () => {
  it('do not keep the process alive', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'GET') {
          res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
        } else if (req.method === 'POST' && req.headers['content-length'] !== '54') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}');
        } else {
          res.writeHead(202).end();
        }
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const child = spawn(
        process.execPath,
        [
          '--require',
          require.resolve('@backstage/cli/config/nodeTransform.cjs'),
          path.join(__dirname, 'testing', 'idleConnectionsExit.ts'),
          `http://127.0.0.1:${port}/mcp`,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', chunk => (stderr += chunk));
      let openWhenDone = -1;
      child.stdout.on('data', chunk => {
        if (String(chunk).includes('done')) server.getConnections((_e, n) => (openWhenDone = n));
      });
      // The server keeps idle connections for 60 s, twice the test's time limit: a child that
      // waited for them could not exit within the test.
      const code = await new Promise<number | null>(resolve => child.on('exit', resolve));
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(openWhenDone).toBeGreaterThanOrEqual(1); // an idle kept-alive connection existed
    } finally {
      server.closeAllConnections();
      await new Promise(resolve => server.close(resolve));
    }
  }, 30_000);
});
