/*
 * The modern (MCP 2026-07-28, stateless) example server, beside the legacy one in server.ts, so
 * that `yarn start` and the tests have a mixed fleet. Built on the official SDK v2
 * (`@modelcontextprotocol/server` 2.4.0) with its default entry point, `createMcpHandler`: a
 * fresh server per request, no sessions; 2025 clients are served statelessly by the SDK's
 * built-in fallback (no GET stream, so they see no change events), 2026-07-28 clients get
 * change events over `subscriptions/listen`.
 *
 * Tools (annotations honest: permission policies select tools by them):
 * - `echo`: returns its message (read-only);
 * - `count`: counts to `steps`, reporting progress when the request has a progress token
 *   (read-only);
 * - `add_tool`: adds a dynamic echo-like tool and announces `tools/list_changed` on every listen
 *   stream (not read-only). Tests can do the same with `addTool(name)`;
 * - `confirm`: asks the client to confirm `message` through `input_required` (an elicitation
 *   under the key `confirm`) and returns what it answered (read-only);
 * - `deploy`: asks "Deploy <target>?" through `input_required` (key `deploy`) and answers
 *   `deployed <target>` on accept, `cancelled` otherwise (destructive; it waits for the
 *   client, not for a clock: docs/contracts/mcp-access.md §9);
 * - `regional_echo`: returns its `message` with its `region`, which the schema marks with
 *   `x-mcp-header: "Region"` (2026-07-28 clients mirror it into `Mcp-Param-Region`). The answer
 *   shows the header as it arrived (still encoded), and the call fails when a modern request
 *   carries the argument without the header (read-only). The low-level `Server` used here does
 *   not check `Mcp-Param-*` itself (the SDK does so only for `McpServer` tools).
 * `legacy: 'reject'` makes it a modern-only server (2025 requests are refused, as by servers that
 * dropped the old revision); the default serves them statelessly.
 * Prompts: `greeting`, and `ask_greeting`, which asks the client for the name to greet through
 * `input_required` (an elicitation under the key `name`). Resources: `example://modern/readme`,
 * and `example://modern/guarded`, which asks the client to confirm the read first (an
 * elicitation under the key `confirm`).
 */
import http from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  inputRequired,
  Server,
  type CallToolResult,
  type McpHttpHandler,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { listenHttp, ServingOptions } from './serving';

/** Options of {@link startModernExampleMcpServer}. @public */
export interface ModernExampleMcpServerOptions extends ServingOptions {
  /** What 2025 requests get: `stateless` (default, the SDK's fallback) or `reject`. */
  legacy?: 'stateless' | 'reject';
}

/** A running modern example server. @public */
export interface ModernExampleMcpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3103/mcp`. */
  url: string;
  port: number;
  /** Adds a dynamic tool and announces the change on every listen stream. */
  addTool(name: string): void;
  /**
   * Announces `prompts/list_changed` on every listen stream although the prompts did not change:
   * a marker for tests, behind everything announced before it.
   */
  announcePromptsChanged(): void;
  /** Number of open `subscriptions/listen` streams. */
  listenStreams(): number;
  /** Number of `tools/call` requests whose response is still open (cancellation tests). */
  openToolCalls(): number;
  close(): Promise<void>;
}

const DYNAMIC_TOOL_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const FIXED_TOOLS = ['echo', 'count', 'add_tool', 'confirm', 'deploy', 'regional_echo'];
const GUARDED_RESOURCE = 'example://modern/guarded';
const CONFIRMED = { confirmed: { type: 'boolean' as const } };

/** The header `regional_echo`'s `region` is mirrored into (`x-mcp-header: "Region"`). */
const REGION_HEADER = 'mcp-param-region';

const text = (t: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: t }],
  ...(isError ? { isError: true } : {}),
});

/** Starts the modern example MCP server. @public */
export async function startModernExampleMcpServer(
  options: ModernExampleMcpServerOptions,
): Promise<ModernExampleMcpServer> {
  const dynamicTools = new Set<string>();
  const served: { handler?: McpHttpHandler } = {};

  function addTool(name: string): boolean {
    if (dynamicTools.has(name) || FIXED_TOOLS.includes(name)) return false;
    dynamicTools.add(name);
    served.handler?.notify.toolsChanged();
    return true;
  }

  const readOnly = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };
  const toolList = (): Tool[] => [
    {
      name: 'echo',
      description: 'Returns the message it is given',
      inputSchema: {
        type: 'object' as const,
        properties: { message: { type: 'string' } },
        required: ['message'],
      },
      annotations: readOnly,
    },
    {
      name: 'count',
      description: 'Counts to `steps`, reporting progress after each step',
      inputSchema: {
        type: 'object' as const,
        properties: {
          steps: { type: 'integer', minimum: 1, maximum: 1000, default: 5 },
          delayMs: { type: 'integer', minimum: 0, maximum: 60000, default: 100 },
        },
      },
      annotations: readOnly,
    },
    {
      name: 'add_tool',
      description: 'Adds a tool with the given name (announces tools/list_changed)',
      inputSchema: {
        type: 'object' as const,
        properties: { name: { type: 'string', pattern: DYNAMIC_TOOL_NAME.source } },
        required: ['name'],
      },
      // Changes every client's tool list, adds without removing; a second call fails.
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    {
      name: 'confirm',
      description: 'Asks the client to confirm a message (elicitation via input_required)',
      inputSchema: {
        type: 'object' as const,
        properties: { message: { type: 'string' } },
        required: ['message'],
      },
      annotations: readOnly,
    },
    {
      name: 'deploy',
      description:
        'Deploys to `target` once the client confirms it (elicitation via input_required)',
      inputSchema: {
        type: 'object' as const,
        properties: { target: { type: 'string', minLength: 1, maxLength: 200 } },
        required: ['target'],
      },
      // It would change the target (a deployment replaces what ran before).
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    {
      name: 'regional_echo',
      description: 'Returns the message with its region (the region is mirrored into a header)',
      inputSchema: {
        type: 'object' as const,
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          message: { type: 'string' },
        },
        required: ['region'],
      },
      annotations: readOnly,
    },
    ...[...dynamicTools].map(name => ({
      name,
      description: `A tool added at runtime by add_tool (${name})`,
      inputSchema: { type: 'object' as const, properties: { text: { type: 'string' } } },
    })),
  ];

  async function count(args: Record<string, unknown>, ctx: ServerContext) {
    const steps = typeof args.steps === 'number' ? args.steps : 5;
    const delayMs = typeof args.delayMs === 'number' ? args.delayMs : 100;
    const progressToken = ctx.mcpReq._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      await new Promise(resolve => setTimeout(resolve, delayMs));
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress: i, total: steps, message: `step ${i} of ${steps}` },
        });
      }
    }
    return text(`counted to ${steps}`);
  }

  /** The client's answer under `key`, or an `input_required` result asking for `field`. */
  function askFor(
    ctx: ServerContext,
    key: string,
    message: string,
    field: { confirmed: { type: 'boolean' } } | { name: { type: 'string' } },
  ) {
    const answer = ctx.mcpReq.inputResponses?.[key] as
      { action?: unknown; content?: Record<string, unknown> } | undefined;
    if (answer !== undefined) return { answer };
    const requestedSchema = {
      type: 'object' as const,
      properties: field,
      required: Object.keys(field),
    };
    return {
      ask: inputRequired({
        inputRequests: { [key]: inputRequired.elicit({ message, requestedSchema }) },
      }),
    };
  }

  function confirm(args: Record<string, unknown>, ctx: ServerContext) {
    const asked = askFor(ctx, 'confirm', String(args.message ?? 'Confirm?'), CONFIRMED);
    if (asked.ask) return asked.ask;
    const { answer } = asked;
    if (answer.action !== 'accept') return text(`not confirmed (${String(answer.action)})`);
    return text(`confirmed: ${String(answer.content?.confirmed)}`);
  }

  function deploy(args: Record<string, unknown>, ctx: ServerContext) {
    const target = String(args.target ?? '');
    const asked = askFor(ctx, 'deploy', `Deploy ${target}?`, CONFIRMED);
    if (asked.ask) return asked.ask;
    return text(asked.answer.action === 'accept' ? `deployed ${target}` : 'cancelled');
  }

  function regionalEcho(args: Record<string, unknown>, ctx: ServerContext) {
    const header = ctx.http?.req?.headers.get(REGION_HEADER) ?? undefined;
    const modern = ctx.http?.req?.headers.get('mcp-protocol-version') === '2026-07-28';
    if (modern && typeof args.region === 'string' && header === undefined) {
      return text(`Mcp-Param-Region header missing for region ${args.region}`, true);
    }
    const seen =
      header === undefined ? 'no Mcp-Param-Region header' : `Mcp-Param-Region: ${header}`;
    return text(`${String(args.message ?? '')} from ${String(args.region)} (${seen})`);
  }

  const factory = () => {
    const server = new Server(
      { name: 'modern-example-mcp-server', version: '0.1.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { listChanged: true },
        },
      },
    );
    server.setRequestHandler('tools/list', async () => ({ tools: toolList() }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const name = request.params.name;
      if (name === 'echo') return text(String(args.message ?? ''));
      if (name === 'count') return count(args, ctx);
      if (name === 'confirm') return confirm(args, ctx);
      if (name === 'deploy') return deploy(args, ctx);
      if (name === 'regional_echo') return regionalEcho(args, ctx);
      if (name === 'add_tool') {
        const added = typeof args.name === 'string' && DYNAMIC_TOOL_NAME.test(args.name);
        if (!added || !addTool(args.name as string)) {
          return text(`cannot add tool ${String(args.name)}`, true);
        }
        return text(`added ${args.name}`);
      }
      if (dynamicTools.has(name)) return text(`${name}: ${String(args.text ?? '')}`);
      return text(`Unknown tool ${name}`, true);
    });
    server.setRequestHandler('prompts/list', async () => ({
      prompts: [
        {
          name: 'greeting',
          description: 'A greeting for someone',
          arguments: [{ name: 'name', required: true }],
        },
        {
          name: 'ask_greeting',
          description: 'A greeting for someone the client is asked about (input_required)',
        },
      ],
    }));
    server.setRequestHandler('prompts/get', async (request, ctx) => {
      let name = request.params.arguments?.name;
      if (request.params.name === 'ask_greeting') {
        const asked = askFor(ctx, 'name', 'Whom should the greeting greet?', {
          name: { type: 'string' },
        });
        if (asked.ask) return asked.ask;
        name = String(asked.answer.content?.name ?? `nobody (${String(asked.answer.action)})`);
      } else if (request.params.name !== 'greeting') {
        throw new Error(`Unknown prompt ${request.params.name}`);
      }
      return {
        messages: [
          {
            role: 'user' as const,
            content: { type: 'text' as const, text: `Hello, ${name}!` },
          },
        ],
      };
    });
    server.setRequestHandler('resources/list', async () => ({
      resources: [
        {
          uri: 'example://modern/readme',
          name: 'modern-readme',
          description: 'What this server is',
          mimeType: 'text/plain',
        },
        {
          uri: GUARDED_RESOURCE,
          name: 'modern-guarded',
          description: 'Read only after the client confirms (input_required)',
          mimeType: 'text/plain',
        },
      ],
    }));
    server.setRequestHandler('resources/read', async (request, ctx) => {
      const { uri } = request.params;
      let contents = 'The modern (2026-07-28) example MCP server of this repository.';
      if (uri === GUARDED_RESOURCE) {
        const asked = askFor(ctx, 'confirm', `Read ${uri}?`, CONFIRMED);
        if (asked.ask) return asked.ask;
        contents =
          asked.answer.action === 'accept' && asked.answer.content?.confirmed === true
            ? 'Guarded contents, read after confirmation.'
            : `not confirmed (${String(asked.answer.action)})`;
      }
      return { contents: [{ uri, mimeType: 'text/plain', text: contents }] };
    });
    return server;
  };
  const handler = createMcpHandler(factory, { legacy: options.legacy ?? 'stateless' });
  served.handler = handler;
  const serve = toNodeHandler(handler);

  let listenStreams = 0;
  let openToolCalls = 0;
  const httpServer = http.createServer((req, res) => {
    if (
      options.bearerToken !== undefined &&
      req.headers.authorization !== `Bearer ${options.bearerToken}`
    ) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    if (req.headers['mcp-method'] === 'subscriptions/listen') {
      listenStreams++;
      res.once('close', () => listenStreams--);
    }
    if (req.headers['mcp-method'] === 'tools/call') {
      openToolCalls++;
      res.once('close', () => openToolCalls--);
    }
    serve(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const { url, port, closeHttp } = await listenHttp(httpServer, options);
  return {
    url,
    port,
    addTool: name => {
      addTool(name);
    },
    announcePromptsChanged: () => handler.notify.promptsChanged(),
    listenStreams: () => listenStreams,
    openToolCalls: () => openToolCalls,
    async close() {
      await handler.close();
      await closeHttp();
    },
  };
}
