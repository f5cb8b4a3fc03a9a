/*
 * The "whoami" MCP server of the broker's identity tests (spec §11): a backend that acts on the
 * caller's own account, as a GitHub or Jira server would, and reports who it thinks is calling.
 *
 * Every request must carry a credential it accepts, else HTTP 401 with a Bearer challenge (as a
 * real resource server): the broker's own static token (its lists and event connection), a JWT
 * verified against a JWK Set (`jwt`: signature, `exp`, `iss`, `aud` — the tokens of the test
 * token exchange server), or a personal API key in a header (`apiKeys`). The tool `whoami`, the
 * prompt `whoami` and the resource `whoami://me` answer with what the request carried (the
 * 2025-11-25 server also has `ask`, which asks the caller a question before it answers):
 *   { principal, credential: 'broker' | 'jwt' | 'api-key', sub, aud, iss, act, scope, jti }
 * and a completion of the `whoami` prompt's argument `who` (`completion/complete`) answers with
 * the principal as its one value.
 * Every request is recorded (`received`): its credential headers by name, and every header it
 * carried (`headers`), so a test can assert that the client's own token — or any other header —
 * never arrives.
 *
 * `era` picks the protocol: `legacy` is an SDK 1.x server with 2025-11-25 sessions, `modern` an
 * SDK v2 stateless 2026-07-28 server (`createMcpHandler`, legacy requests refused).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as LegacyMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CompleteRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { legacySessions, readJsonBody } from './legacySessions';

/** Who a request was from, as the server verified it. */
export interface WhoamiIdentity {
  /** The broker (static token), the JWT's `sub`, or the API key's owner. */
  principal: string;
  credential: 'broker' | 'jwt' | 'api-key';
  sub?: string;
  aud?: string | string[];
  iss?: string;
  act?: unknown;
  scope?: string;
  jti?: string;
}

/** The credential headers one request carried (for no-passthrough assertions). */
export interface ReceivedCredentials {
  /** The JSON-RPC method, when the body had one. */
  method?: string;
  /** True when the body was a JSON-RPC response (a client's answer, relayed). */
  response?: boolean;
  authorization?: string;
  /** The API key header's value, when `apiKeys` is configured. */
  apiKey?: string;
  /** Cookie header, if any (never expected). */
  cookie?: string;
  /**
   * Every header the request carried, names in lower case (as Node reads them; repeated headers
   * joined with ", ").
   */
  headers: Readonly<Record<string, string>>;
}

/** Options of {@link startWhoamiServer}. */
export interface WhoamiServerOptions {
  era: 'legacy' | 'modern';
  /** The broker's own bearer token (lists, events); default none accepted. */
  brokerToken?: string;
  /** JWTs accepted as personal credentials. */
  jwt?: { jwksUrl: string; issuer: string; audience: string };
  /** API keys accepted as personal credentials: the header and value → owner. */
  apiKeys?: { header: string; prefix?: string; owners: Record<string, string> };
}

/** A running whoami server. */
export interface WhoamiServer {
  url: string;
  /** Credential headers of every request, oldest first. */
  readonly received: readonly ReceivedCredentials[];
  /** Refuses (401) every personal credential from now on until `acceptAgain` (a revoked key). */
  refusePersonal(): void;
  acceptAgain(): void;
  close(): Promise<void>;
}

class Unauthorized extends Error {}

const reportOf = (identity: WhoamiIdentity | undefined) => JSON.stringify(identity ?? null);

function register(
  server: LegacyMcpServer | ModernMcpServer,
  identityOf: (extra: any) => WhoamiIdentity | undefined,
) {
  const s = server as any;
  s.registerTool(
    'whoami',
    {
      description: 'Who the server thinks is calling (from the credential it received)',
      annotations: { readOnlyHint: true },
    },
    async (extra: any) => ({ content: [{ type: 'text', text: reportOf(identityOf(extra)) }] }),
  );
  if (server instanceof LegacyMcpServer) {
    // Asks the caller a question on the call's stream (2025-11-25), so a test can see which
    // credential the answer comes back with.
    s.registerTool(
      'ask',
      {
        description: 'Asks the caller to confirm, then reports who answered',
        annotations: { readOnlyHint: true },
      },
      async (extra: any) => {
        const answer = await server.server.elicitInput(
          { message: 'Proceed?', requestedSchema: { type: 'object', properties: {} } },
          { relatedRequestId: extra.requestId },
        );
        return { content: [{ type: 'text', text: JSON.stringify({ action: answer.action }) }] };
      },
    );
  }
  s.registerPrompt('whoami', { description: 'Who is calling, as a prompt' }, (extra: any) => ({
    messages: [{ role: 'user', content: { type: 'text', text: reportOf(identityOf(extra)) } }],
  }));
  const complete = async (_request: unknown, extra: any) => ({
    completion: { values: [identityOf(extra)?.principal ?? 'nobody'], total: 1, hasMore: false },
  });
  if (server instanceof LegacyMcpServer) {
    server.server.registerCapabilities({ completions: {} });
    server.server.setRequestHandler(CompleteRequestSchema, complete);
  } else {
    s.server.registerCapabilities({ completions: {} });
    s.server.setRequestHandler('completion/complete', complete);
  }
  s.registerResource(
    'me',
    'whoami://me',
    { description: 'Who is calling, as a resource', mimeType: 'application/json' },
    async (uri: URL, extra: any) => ({
      contents: [
        { uri: uri.href, mimeType: 'application/json', text: reportOf(identityOf(extra)) },
      ],
    }),
  );
}

/** Starts a whoami server on a free loopback port. */
export async function startWhoamiServer(options: WhoamiServerOptions): Promise<WhoamiServer> {
  const received: ReceivedCredentials[] = [];
  const jwks = options.jwt ? createRemoteJWKSet(new URL(options.jwt.jwksUrl)) : undefined;
  let refusing = false;

  const authenticate = async (req: http.IncomingMessage): Promise<WhoamiIdentity> => {
    const authorization = req.headers.authorization;
    const bearer = /^Bearer (\S+)$/i.exec(authorization ?? '')?.[1];
    if (
      bearer !== undefined &&
      options.brokerToken !== undefined &&
      bearer === options.brokerToken
    ) {
      return { principal: 'broker', credential: 'broker' };
    }
    if (refusing) throw new Unauthorized('credential revoked');
    if (options.apiKeys) {
      const raw = req.headers[options.apiKeys.header.toLowerCase()];
      const value = typeof raw === 'string' ? raw : undefined;
      const prefix = options.apiKeys.prefix ?? '';
      if (value !== undefined && value.startsWith(prefix)) {
        const owner = options.apiKeys.owners[value.slice(prefix.length)];
        if (owner !== undefined) return { principal: owner, credential: 'api-key' };
      }
    }
    if (jwks && options.jwt && bearer !== undefined) {
      try {
        const { payload } = await jwtVerify(bearer, jwks, {
          issuer: options.jwt.issuer,
          audience: options.jwt.audience,
        });
        return {
          principal: String(payload.sub),
          credential: 'jwt',
          sub: payload.sub,
          aud: payload.aud,
          iss: payload.iss,
          act: payload.act,
          ...(typeof payload.scope === 'string' ? { scope: payload.scope } : {}),
          ...(payload.jti === undefined ? {} : { jti: payload.jti }),
        };
      } catch (error) {
        throw new Unauthorized((error as Error).message);
      }
    }
    throw new Unauthorized('no acceptable credential');
  };

  const record = (req: http.IncomingMessage, body: unknown) => {
    const apiKeyHeader = options.apiKeys?.header.toLowerCase();
    const apiKey = apiKeyHeader === undefined ? undefined : req.headers[apiKeyHeader];
    const message = body as any;
    const isResponse =
      typeof message === 'object' &&
      message !== null &&
      message.method === undefined &&
      ('result' in message || 'error' in message);
    received.push({
      ...(typeof message?.method === 'string' ? { method: message.method } : {}),
      ...(isResponse ? { response: true } : {}),
      ...(req.headers.authorization === undefined
        ? {}
        : { authorization: req.headers.authorization }),
      ...(typeof apiKey === 'string' ? { apiKey } : {}),
      ...(req.headers.cookie === undefined ? {} : { cookie: req.headers.cookie }),
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(', ') : String(value),
        ]),
      ),
    });
  };

  const toAuthInfo = (identity: WhoamiIdentity) => ({
    token: 'verified',
    clientId: identity.principal,
    scopes: [],
    extra: { identity },
  });
  const identityOf = (extra: any): WhoamiIdentity | undefined =>
    (extra?.authInfo?.extra?.identity ?? extra?.http?.authInfo?.extra?.identity) as
      WhoamiIdentity | undefined;

  let serve: (
    req: http.IncomingMessage & { auth?: unknown },
    res: http.ServerResponse,
    body: unknown,
  ) => Promise<void>;
  let closeEra: () => Promise<void>;
  if (options.era === 'modern') {
    const handler = createMcpHandler(
      ctx => {
        const server = new ModernMcpServer({ name: 'whoami', version: '1.0.0' });
        const identity = (ctx.authInfo?.extra as any)?.identity as WhoamiIdentity | undefined;
        register(server, () => identity);
        return server;
      },
      { legacy: 'reject' },
    );
    const node = toNodeHandler(handler);
    serve = (req, res, body) => node(req as any, res, body);
    closeEra = () => handler.close();
  } else {
    const sessions = legacySessions(() => {
      const server = new LegacyMcpServer({ name: 'whoami', version: '1.0.0' });
      register(server, identityOf);
      return { server };
    });
    serve = (req, res, body) => sessions.serve(req, res, body);
    closeEra = () => sessions.close();
  }

  const httpServer = http.createServer((req, res) => {
    (async () => {
      const body = await readJsonBody(req);
      record(req, body);
      let identity: WhoamiIdentity;
      try {
        identity = await authenticate(req);
      } catch (error) {
        res.writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer error="invalid_token", error_description="${String(
            (error as Error).message,
          ).replace(/["\\\r\n]/g, ' ')}"`,
        });
        res.end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      (req as any).auth = toAuthInfo(identity);
      await serve(req, res, body);
    })().catch(error => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>(resolve => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    refusePersonal() {
      refusing = true;
    },
    acceptAgain() {
      refusing = false;
    },
    async close() {
      await closeEra();
      httpServer.closeAllConnections();
      await new Promise<void>(resolve => httpServer.close(() => resolve()));
    },
  };
}
