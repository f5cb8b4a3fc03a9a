/*
 * `untilUp` against a real HTTP server that answers as a Backstage plugin does while it starts:
 * 404 before its routes are mounted, 503 when the start-up pause ran out, then 401 (a request
 * without a token, once the plugin is up). The module's effect on a whole backend with RBAC is
 * tested in packages/backend/src/e2e/rbacStartup.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { untilUp } from './untilUp';

/** A server answering `statuses` in turn, then the last one for ever; counts the requests. */
async function answering(statuses: number[]) {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.statusCode = statuses[Math.min(seen.length - 1, statuses.length - 1)];
    res.end();
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/late/.well-known/backstage/permissions/metadata`,
    seen,
    close: () => new Promise<void>(resolve => server.close(() => resolve())),
  };
}

describe('untilUp', () => {
  it('asks again while the plugin answers 404 or 503, and is done at its first other answer', async () => {
    const server = await answering([404, 404, 503, 401]);
    try {
      expect(await untilUp(server.url, Date.now() + 60_000, 1)).toBe(true);
      expect(server.seen).toHaveLength(4);
      expect(server.seen[0]).toBe('/api/late/.well-known/backstage/permissions/metadata');
    } finally {
      await server.close();
    }
  });

  it('counts a plugin that answers (200) as up at once', async () => {
    const server = await answering([200]);
    try {
      expect(await untilUp(server.url, Date.now() + 60_000, 1)).toBe(true);
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('gives up at the deadline when the plugin never comes up, or nothing listens', async () => {
    const server = await answering([404]);
    try {
      expect(await untilUp(server.url, Date.now() + 200, 1)).toBe(false);
      expect(server.seen.length).toBeGreaterThan(1);
    } finally {
      await server.close();
    }
    // Nothing listens there any more: connection refused is "ask again" too, until the deadline.
    expect(await untilUp(server.url, Date.now() + 200, 1)).toBe(false);
  });
});
