/*
 * @modelcontextprotocol/server-everything in streamable-HTTP mode as a child process, on a
 * loopback port reserved for it (handedOverPort.ts, childServer.ts). Quirks worth knowing: on a
 * port of its own it binds every interface; it logs each request to stdout (discarded here),
 * answers unknown sessions with 400 rather than 404, and offers `trigger-elicitation-request`
 * only to sessions whose client declared elicitation.
 */
import { ChildServer, startChildServer } from './childServer';

/** A running server-everything. */
export type EverythingServer = ChildServer;

/** Starts server-everything and waits until it answers HTTP. */
export async function startEverythingServer(
  options: { port?: number } = {},
): Promise<EverythingServer> {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  return startChildServer({
    name: 'server-everything',
    args: [entry, 'streamableHttp'],
    port: options.port,
  });
}
