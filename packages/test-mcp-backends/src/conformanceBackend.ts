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
 * SHOULD, so a broker can tell which call they belong to.
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
  ElicitResultSchema,
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
} from '@modelcontextprotocol/sdk/types.js';
import { createModernConformanceHandler } from './modernConformanceServer';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const NO_ARGS = { type: 'object' as const, properties: {} };

type Extra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];
type Tool = {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  run(args: Record<string, any>, extra: Extra): Promise<CallToolResult>;
};

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

async function elicit(extra: Extra, params: Record<string, unknown>) {
  return extra.sendRequest(
    { method: 'elicitation/create', params: params as any },
    ElicitResultSchema,
  );
}

const TOOLS: Tool[] = [
  {
    name: 'test_simple_text',
    description: 'Simple text content',
    inputSchema: NO_ARGS,
    run: async () => text('This is a simple text response for testing.'),
  },
  {
    name: 'test_image_content',
    description: 'Image content',
    inputSchema: NO_ARGS,
    run: async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
  },
  {
    name: 'test_audio_content',
    description: 'Audio content',
    inputSchema: NO_ARGS,
    run: async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
  },
  {
    name: 'test_embedded_resource',
    description: 'Embedded resource content',
    inputSchema: NO_ARGS,
    run: async () => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    }),
  },
  {
    name: 'test_multiple_content_types',
    description: 'Text, image and resource content',
    inputSchema: NO_ARGS,
    run: async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    }),
  },
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
  {
    name: 'test_error_handling',
    description: 'Always fails',
    inputSchema: NO_ARGS,
    run: async () => ({
      isError: true,
      content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    }),
  },
  {
    name: 'test_sampling',
    description: 'Asks the client for an LLM completion',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
    },
    run: async (args, extra) => {
      const result = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }],
            maxTokens: 100,
          },
        },
        CreateMessageResultSchema,
      );
      const content = result.content as { type: string; text?: string };
      return text(`LLM response: ${content.type === 'text' ? content.text : 'No response'}`);
    },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user for input',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
    },
    run: async (args, extra) => {
      const result = await elicit(extra, {
        message: String(args.message),
        requestedSchema: {
          type: 'object',
          properties: { response: { type: 'string', description: "User's response" } },
          required: ['response'],
        },
      });
      return text(
        `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
      );
    },
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicitation with defaults for every primitive type (SEP-1034)',
    inputSchema: NO_ARGS,
    run: async (_args, extra) => {
      const result = await elicit(extra, {
        message: 'Please review and update the form fields with defaults',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: {
              type: 'string',
              description: 'User status',
              enum: ['active', 'inactive', 'pending'],
              default: 'active',
            },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
          required: [],
        },
      });
      return text(
        `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
      );
    },
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicitation with the enum schema variants (SEP-1330)',
    inputSchema: NO_ARGS,
    run: async (_args, extra) => {
      const choices = [
        { const: 'value1', title: 'First Choice' },
        { const: 'value2', title: 'Second Choice' },
        { const: 'value3', title: 'Third Choice' },
      ];
      const result = await elicit(extra, {
        message: 'Please select options from the enum fields',
        requestedSchema: {
          type: 'object',
          properties: {
            untitledSingle: {
              type: 'string',
              description: 'Select one option',
              enum: ['option1', 'option2', 'option3'],
            },
            titledSingle: {
              type: 'string',
              description: 'Select one option with titles',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              description: 'Select one option (legacy)',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: {
              type: 'array',
              description: 'Select multiple options',
              minItems: 1,
              maxItems: 3,
              items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            },
            titledMulti: {
              type: 'array',
              description: 'Select multiple options with titles',
              minItems: 1,
              maxItems: 3,
              items: { anyOf: choices },
            },
          },
          required: [],
        },
      });
      return text(
        `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
      );
    },
  },
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

const RESOURCES = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    title: 'Static Text Resource',
    description: 'A static text resource for testing',
    mimeType: 'text/plain',
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    title: 'Static Binary Resource',
    description: 'A static binary resource (image) for testing',
    mimeType: 'image/png',
  },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    title: 'Watched Resource',
    description: 'A resource clients may subscribe to',
    mimeType: 'text/plain',
  },
];

const PROMPTS = [
  {
    name: 'test_simple_prompt',
    title: 'Simple Test Prompt',
    description: 'A simple prompt without arguments',
  },
  {
    name: 'test_prompt_with_arguments',
    title: 'Prompt With Arguments',
    description: 'A prompt with required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    title: 'Prompt With Embedded Resource',
    description: 'A prompt that includes an embedded resource',
    arguments: [
      { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
    ],
  },
  {
    name: 'test_prompt_with_image',
    title: 'Prompt With Image',
    description: 'A prompt that includes image content',
  },
];

function getPrompt(name: string, args: Record<string, string>): GetPromptResult {
  switch (name) {
    case 'test_simple_prompt':
      return {
        messages: [
          { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
        ],
      };
    case 'test_prompt_with_arguments':
      return {
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`,
            },
          },
        ],
      };
    case 'test_prompt_with_embedded_resource':
      return {
        messages: [
          {
            role: 'user',
            content: {
              type: 'resource',
              resource: {
                uri: args.resourceUri,
                mimeType: 'text/plain',
                text: 'Embedded resource content for testing.',
              },
            },
          },
          {
            role: 'user',
            content: { type: 'text', text: 'Please process the embedded resource above.' },
          },
        ],
      };
    case 'test_prompt_with_image':
      return {
        messages: [
          { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
          { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
        ],
      };
    default:
      throw new Error(`Unknown prompt ${name}`);
  }
}

function createSessionServer(): Server {
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
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = TOOLS.find(t => t.name === request.params.name);
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
    resourceTemplates: [
      {
        uriTemplate: 'test://template/{id}/data',
        name: 'template',
        title: 'Resource Template',
        description: 'A resource template with parameter substitution',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async request => {
    const uri = request.params.uri;
    if (uri === 'test://static-text') {
      return {
        contents: [
          { uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
        ],
      };
    }
    if (uri === 'test://static-binary')
      return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] };
    if (uri === 'test://watched-resource')
      return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] };
    const template = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
    if (template) {
      const id = template[1];
      return {
        contents: [
          {
            uri,
            mimeType: 'application/json',
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    }
    throw new Error(`Unknown resource ${uri}`);
  });
  server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async request =>
    getPrompt(request.params.name, (request.params.arguments ?? {}) as Record<string, string>),
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
  const app = createMcpExpressApp({ host });
  const modern = createModernConformanceHandler();
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
      const server = createSessionServer();
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: id => {
          transports.set(id, created);
        },
      });
      created.onclose = () => {
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
