/*
 * The conformance scenario backend, both protocol eras on one endpoint: 2025-11-25 session
 * traffic goes to the sessionful server below, everything that carries the 2026-07-28
 * per-request `_meta` (SDK v2 `isLegacyRequest` says false) to the SDK v2 server in
 * modernConformanceServer.ts — the routing the SDK documents for adding 2026-07-28 to an
 * existing sessionful deployment.
 *
 * The legacy half: an MCP server with the tools, resources and prompts that the server scenarios
 * of `@modelcontextprotocol/conformance@0.1.13` expect (`test_simple_text`, `test://static-text`,
 * `test_simple_prompt`, …). Adapted from that project's MIT-licensed example
 * `examples/servers/typescript/everything-server.ts`, written against the SDK's low-level
 * `Server` with plain JSON schemas (so `json_schema_2020_12_tool` keeps `$schema`/`$defs`).
 *
 * One difference that matters behind a gateway: elicitation and sampling requests are sent with
 * the call's request id as related request (on the call's POST stream), as the MCP spec says they
 * SHOULD, so a broker can tell which call they belong to. The legacy half also has push-style
 * versions of the 2026-07-28 scenario tools (conformancePushTools.ts), so that the 2026-07-28
 * suite can run through a broker that speaks 2025-11-25 to this backend.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import {
  CallToolRequestSchema,
  CallToolResult,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  GetPromptRequestSchema,
  GetPromptResult,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  isInitializeRequest,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import {
  CONTENT_TOOLS,
  INPUT_TOOLS,
  NO_ARGS,
  PROMPTS,
  RESOURCE_TEMPLATES,
  RESOURCES,
  contentPrompt,
  readContentResource,
} from './conformanceContent';
import {
  announceToSessions,
  elicit,
  type LegacyExtra,
  type LegacySharedState,
  type LegacyTool,
  pushStylePrompt,
  pushStylePrompts,
  pushStyleTools,
} from './conformancePushTools';
import { announceToListeners, createModernConformanceHandler } from './modernConformanceServer';

type Tool = LegacyTool;

/** `resources/read` of an unknown URI in 2025-11-25 (`server/resources.mdx` §Error Handling). */
const RESOURCE_NOT_FOUND_2025 = -32002;

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

const TOOLS: Tool[] = [
  ...CONTENT_TOOLS.map(({ name, description, result }) => ({
    name,
    description,
    inputSchema: NO_ARGS,
    run: async () => result as CallToolResult,
  })),
  {
    name: 'test_tool_with_logging',
    description: 'Emits log messages while running',
    inputSchema: NO_ARGS,
    run: async (_args, extra) => {
      for (const data of [
        'Tool execution started',
        'Tool processing data',
        'Tool execution completed',
      ]) {
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', data },
        });
        await sleep(50);
      }
      return text('Tool with logging executed successfully');
    },
  },
  {
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50, 100 of 100',
    inputSchema: NO_ARGS,
    run: async (_args, extra) => {
      const progressToken = extra._meta?.progressToken ?? 0;
      for (const progress of [0, 50, 100]) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: {
            progressToken,
            progress,
            total: 100,
            message: `Completed step ${progress} of 100`,
          },
        });
        if (progress < 100) await sleep(50);
      }
      return text(String(progressToken));
    },
  },
  // Asked with real server-to-client requests on the call's stream (the 2025 way).
  ...INPUT_TOOLS.map(tool => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    run: async (args: Record<string, any>, extra: LegacyExtra) => {
      const { method, params } = tool.ask(args);
      const result =
        method === 'sampling/createMessage'
          ? await extra.sendRequest({ method, params: params as any }, CreateMessageResultSchema)
          : await elicit(extra, params);
      return text(tool.answer(result as Record<string, unknown>));
    },
  })),
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features (SEP-1613)',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
    run: async args => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  },
];

async function getPrompt(
  name: string,
  args: Record<string, string>,
  extra: Parameters<LegacyTool['run']>[1],
): Promise<GetPromptResult> {
  const prompt = contentPrompt(name, args) ?? (await pushStylePrompt(name, extra));
  if (prompt === undefined) throw new Error(`Unknown prompt ${name}`);
  return prompt as GetPromptResult;
}

/** One session's server; `shared` holds what the trigger tools change for every session. */
function createSessionServer(shared: LegacySharedState): Server {
  const server = new Server(
    { name: 'mcp-conformance-test-server', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
    },
  );
  const tools = () => [...TOOLS, ...pushStyleTools(shared, () => server.getClientCapabilities())];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools().map(({ name, description, inputSchema }) => ({
      name,
      description,
      inputSchema,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools().find(t => t.name === request.params.name);
    if (!tool)
      return {
        isError: true,
        content: [{ type: 'text', text: `Unknown tool ${request.params.name}` }],
      };
    try {
      return await tool.run(request.params.arguments ?? {}, extra);
    } catch (error) {
      return {
        isError: true,
        content: [{ type: 'text', text: `${tool.name} failed: ${(error as Error).message}` }],
      };
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async request => {
    const resource = readContentResource(request.params.uri);
    if (resource === undefined) {
      // The 2025-11-25 code for it (2026-07-28 replaced it with -32602, SEP-2164).
      throw new McpError(RESOURCE_NOT_FOUND_2025, `Resource not found: ${request.params.uri}`, {
        uri: request.params.uri,
      });
    }
    return resource;
  });
  server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [...PROMPTS, ...pushStylePrompts(shared)],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) =>
    getPrompt(
      request.params.name,
      (request.params.arguments ?? {}) as Record<string, string>,
      extra,
    ),
  );
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
  server.setRequestHandler(CompleteRequestSchema, async () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));
  return server;
}

/** A running conformance backend. */
export interface ConformanceBackend {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the conformance scenario backend: 2025-11-25 sessions and 2026-07-28 stateless requests
 * on one endpoint, DNS rebinding protection on localhost.
 */
export async function startConformanceBackend(
  options: { port?: number; host?: string } = {},
): Promise<ConformanceBackend> {
  const host = options.host ?? '127.0.0.1';
  const transports = new Map<string, StreamableHTTPServerTransport>();
  // One backend, one state: both halves flip the same toggles and announce a change to the
  // clients of both eras (a broker may list in one era and call tools in the other).
  const shared: LegacySharedState = { extraTool: false, extraPrompt: false, servers: new Set() };
  const app = createMcpExpressApp({ host });
  const modern = createModernConformanceHandler({
    toggles: shared,
    announceToOtherEra: kind => announceToSessions(shared, kind),
  });
  shared.announceToOtherEra = kind => announceToListeners(modern, kind);
  const serveModern = toNodeHandler(modern);

  app.all('/mcp', async (req, res) => {
    if (req.method === 'POST' && !(await isLegacyRequest(await toWebRequest(req, req.body)))) {
      await serveModern(req, res, req.body);
      return;
    }
    const sessionId = req.header('mcp-session-id');
    let transport = sessionId === undefined ? undefined : transports.get(sessionId);
    if (!transport) {
      if (sessionId !== undefined) {
        res.status(404).json({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'Session not found' },
        });
        return;
      }
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        res.status(400).json({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: 'Bad Request: no session id' },
        });
        return;
      }
      const server = createSessionServer(shared);
      shared.servers.add(server);
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: id => {
          transports.set(id, created);
        },
      });
      created.onclose = () => {
        shared.servers.delete(server);
        if (created.sessionId !== undefined) transports.delete(created.sessionId);
      };
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, req.body);
  });

  const httpServer = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/mcp`,
    port,
    async close() {
      await modern.close();
      for (const transport of transports.values()) await transport.close();
      transports.clear();
      httpServer.closeAllConnections();
      await new Promise<void>(resolve => httpServer.close(() => resolve()));
    },
  };
}
