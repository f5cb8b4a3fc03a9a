/* Serves a SubjectTokenIssuer's JWK Set over HTTP, as the broker's router does, for tests of the exchange alone. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SubjectTokenIssuer } from '../SubjectTokenIssuer';

/** The issuer's JWKS at `<url>`; `close` stops serving it. */
export async function serveJwks(
  issuer: () => SubjectTokenIssuer,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(issuer().jwks()));
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
