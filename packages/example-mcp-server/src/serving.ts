/*
 * What both example servers share around their MCP handling: listening on the configured
 * interface and port, closing every connection on close, and the `main` of a server process
 * (`PORT`, `HOST`, `MCP_TOKEN` from the environment; SIGINT/SIGTERM close it).
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where an example server listens and whom it lets in. */
export interface ServingOptions {
  /** Port to listen on; 0 picks a free one. */
  port: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** When set, requests must carry `Authorization: Bearer <token>` (else 401). */
  bearerToken?: string;
}

/** Listens on `options`; resolves with the MCP endpoint URL, the port and a close function. */
export async function listenHttp(
  httpServer: http.Server,
  options: ServingOptions,
): Promise<{ url: string; port: number; closeHttp(): Promise<void> }> {
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/mcp`,
    port,
    async closeHttp() {
      httpServer.closeAllConnections();
      await new Promise<void>(resolve => httpServer.close(() => resolve()));
    },
  };
}

/** Runs a server as a process: options from the environment, stopped by SIGINT/SIGTERM. */
export function runServerProcess(
  label: string,
  defaultPort: number,
  start: (options: ServingOptions) => Promise<{ url: string; close(): Promise<void> }>,
): void {
  start({
    port: Number(process.env.PORT ?? defaultPort),
    host: process.env.HOST,
    bearerToken: process.env.MCP_TOKEN,
  }).then(
    server => {
      process.stdout.write(`${label} listening on ${server.url}\n`);
      const stop = () => {
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    },
    error => {
      process.stderr.write(`${label} failed to start: ${error}\n`);
      process.exit(1);
    },
  );
}
