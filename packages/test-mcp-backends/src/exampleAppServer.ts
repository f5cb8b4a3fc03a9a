/*
 * The official MCP Apps example servers (`@modelcontextprotocol/server-basic-vanillajs` and
 * `server-basic-react`, ext-apps 2.x) as child processes on loopback ports handed over to them
 * (childServer.ts). Both speak 2025-11-25 only, without sessions, on `/mcp`, and both register
 * tool `get-time` rendering `ui://get-time/mcp-app.html` — each with HTML of its own: two app
 * servers whose UI URIs clash, as a gateway meets them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ChildServer, startChildServer } from './childServer';

/** Which official example app server. */
export type ExampleAppKind = 'vanillajs' | 'react';

/** A running example app server, with the HTML its UI resource serves. */
export interface ExampleAppServer extends ChildServer {
  readonly kind: ExampleAppKind;
  /** The package's `dist/mcp-app.html`, which its `ui://get-time/mcp-app.html` serves. */
  readonly appHtml: string;
}

/**
 * Starts one of the official example app servers on 127.0.0.1 — on a free port unless `port`
 * names one — and waits until it answers HTTP.
 */
export async function startExampleAppServer(
  kind: ExampleAppKind,
  port?: number,
): Promise<ExampleAppServer> {
  // The package exports only its server module (`dist/server.js`), not package.json.
  const distDir = path.dirname(require.resolve(`@modelcontextprotocol/server-basic-${kind}`));
  const server = await startChildServer({
    name: `server-basic-${kind}`,
    args: [path.join(distDir, 'index.js')],
    port,
  });
  const appHtml = readFileSync(path.join(distDir, 'mcp-app.html'), 'utf8');
  return { ...server, kind, appHtml };
}
