/*
 * A small streamable-HTTP MCP server for development and tests.
 *
 * One McpServer per session (never shared across sessions). Tools:
 * - `echo`: returns its message.
 * - `count`: counts to `steps`, sending `notifications/progress` when the caller gave a progressToken.
 * - `confirm`: asks the client through `elicitation/create` and reports the answer.
 * - `deploy`: asks the client through `elicitation/create` ("Deploy <target>?") and answers
 *   `deployed <target>` on accept, `cancelled` otherwise. It pretends to change something
 *   (destructive), and it waits for the client, not for a clock: tests use it for a call that
 *   is still running while something else happens (docs/contracts/mcp-access.md §9, §10.2).
 * - `add_tool` / `remove_tool`: add or remove a dynamic echo-like tool on every session,
 *   which sends `notifications/tools/list_changed` on each session's GET stream.
 * Every tool declares MCP annotations honestly (permission policies select tools by them): the
 * first three are read-only; the dynamic tools declare none, so MCP's defaults apply to them.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import express from 'express';
import { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { listenHttp, ServingOptions } from './serving';

/** Options of {@link startExampleMcpServer}. @public */
export type ExampleMcpServerOptions = ServingOptions;

/** A running example server. @public */
export interface ExampleMcpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3101/mcp`. */
  url: string;
  port: number;
  /** Number of live sessions. */
  sessionCount(): number;
  /** Number of GET event streams open now (notifications sent to a session travel on them). */
  openEventStreams(): number;
  /**
   * Sends `notifications/prompts/list_changed` on every session's GET stream although the
   * prompts did not change: a marker for tests, which arrives after everything the server sent
   * before it (sessions without an open GET stream do not get it).
   */
  announcePromptsChanged(): void;
  /** Adds a dynamic tool as `add_tool` does (tests: a change made at the backend itself). */
  addTool(name: string): void;
  /**
   * Number of `count` calls whose cancellation reached this server (their abort signal fired:
   * `notifications/cancelled`, or their session closing), so tests can see a cancel arrive.
   */
  cancelledToolCalls(): number;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  dynamicTools: Map<string, RegisteredTool>;
}

const DYNAMIC_TOOL_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/** Starts the example MCP server. @public */
export async function startExampleMcpServer(
  options: ExampleMcpServerOptions,
): Promise<ExampleMcpServer> {
  const sessions = new Map<string, Session>();
  const dynamicToolNames = new Set<string>();
  let eventStreams = 0;
  let cancelledToolCalls = 0;

  function registerDynamicTool(session: Session, name: string) {
    const tool = session.server.registerTool(
      name,
      {
        description: `A tool added at runtime by add_tool (${name})`,
        inputSchema: { text: z.string().optional() },
      },
      async ({ text }) => ({
        content: [{ type: 'text', text: `${name}: ${text ?? ''}` }],
      }),
    );
    session.dynamicTools.set(name, tool);
  }

  /** Adds `name` on every session (each announces it on its GET stream); false if taken. */
  function addDynamicTool(name: string): boolean {
    if (
      dynamicToolNames.has(name) ||
      ['echo', 'count', 'confirm', 'deploy', 'add_tool', 'remove_tool'].includes(name)
    ) {
      return false;
    }
    dynamicToolNames.add(name);
    for (const session of sessions.values()) registerDynamicTool(session, name);
    return true;
  }

  function createSessionServer(): { server: McpServer; dynamicTools: Map<string, RegisteredTool> } {
    const server = new McpServer(
      { name: 'example-mcp-server', version: '0.1.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { listChanged: true },
        },
      },
    );
    server.registerTool(
      'echo',
      {
        description: 'Returns the message it is given',
        inputSchema: { message: z.string() },
        annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      },
      async ({ message }) => ({ content: [{ type: 'text', text: message }] }),
    );
    server.registerTool(
      'count',
      {
        description: 'Counts to `steps`, reporting progress after each step',
        inputSchema: {
          steps: z.number().int().min(1).max(1000).default(5),
          delayMs: z.number().int().min(0).max(60000).default(100),
        },
        annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      },
      async ({ steps, delayMs }, extra) => {
        const progressToken = extra._meta?.progressToken;
        extra.signal.addEventListener('abort', () => cancelledToolCalls++, { once: true });
        for (let i = 1; i <= steps; i++) {
          await new Promise(resolve => setTimeout(resolve, delayMs));
          if (extra.signal.aborted) {
            return { content: [{ type: 'text', text: `cancelled at ${i}` }], isError: true };
          }
          if (progressToken !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: {
                progressToken,
                progress: i,
                total: steps,
                message: `step ${i} of ${steps}`,
              },
            });
          }
        }
        return { content: [{ type: 'text', text: `counted to ${steps}` }] };
      },
    );
    server.registerTool(
      'confirm',
      {
        description: 'Asks the user (through elicitation) to confirm a question',
        inputSchema: { question: z.string().default('Proceed?') },
        // It changes nothing; asking twice asks the user twice, so it is not idempotent.
        annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
      },
      async ({ question }, extra) => {
        // Sent on the call's own POST stream (relatedRequestId), so a gateway in between can tell
        // which call it belongs to; without it the SDK would use the session's GET stream.
        const answer = await server.server.elicitInput(
          {
            message: question,
            requestedSchema: {
              type: 'object',
              properties: {
                confirmed: { type: 'boolean', title: 'Confirmed' },
                comment: { type: 'string', title: 'Comment' },
              },
              required: ['confirmed'],
            },
          },
          { relatedRequestId: extra.requestId },
        );
        return {
          content: [{ type: 'text', text: JSON.stringify(answer) }],
          structuredContent: answer as unknown as Record<string, unknown>,
        };
      },
    );
    server.registerTool(
      'deploy',
      {
        description: 'Deploys to `target` once the user confirms it (through elicitation)',
        inputSchema: { target: z.string().min(1).max(200) },
        // It would change the target (a deployment replaces what ran before).
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
      async ({ target }, extra) => {
        // On the call's own POST stream, as `confirm` does.
        const answer = await server.server.elicitInput(
          {
            message: `Deploy ${target}?`,
            requestedSchema: {
              type: 'object',
              properties: { confirmed: { type: 'boolean', title: 'Deploy' } },
            },
          },
          { relatedRequestId: extra.requestId },
        );
        const text = answer.action === 'accept' ? `deployed ${target}` : 'cancelled';
        return { content: [{ type: 'text', text }] };
      },
    );
    server.registerTool(
      'add_tool',
      {
        description: 'Adds a tool with the given name on every session (sends tools/list_changed)',
        inputSchema: { name: z.string().regex(DYNAMIC_TOOL_NAME) },
        // Changes every client's tool list, adds without removing; a second call fails.
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
      async ({ name }) => {
        if (!addDynamicTool(name)) {
          return {
            content: [{ type: 'text', text: `tool ${name} exists already` }],
            isError: true,
          };
        }
        return { content: [{ type: 'text', text: `added ${name}` }] };
      },
    );
    server.registerTool(
      'remove_tool',
      {
        description: 'Removes a tool added by add_tool (sends tools/list_changed)',
        inputSchema: { name: z.string() },
        // Removing the same tool again changes nothing more.
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      async ({ name }) => {
        if (!dynamicToolNames.delete(name)) {
          return { content: [{ type: 'text', text: `no tool ${name}` }], isError: true };
        }
        for (const session of sessions.values()) {
          session.dynamicTools.get(name)?.remove();
          session.dynamicTools.delete(name);
        }
        return { content: [{ type: 'text', text: `removed ${name}` }] };
      },
    );
    server.registerPrompt(
      'greeting',
      { description: 'A greeting for someone', argsSchema: { name: z.string() } },
      ({ name }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }],
      }),
    );
    server.registerResource(
      'readme',
      'example://readme',
      { description: 'What this server is', mimeType: 'text/plain' },
      async uri => ({
        contents: [{ uri: uri.href, text: 'The example MCP server of this repository.' }],
      }),
    );
    return { server, dynamicTools: new Map() };
  }

  /**
   * Counts a GET stream from the moment the SDK writes its 200 headers (the SDK has registered
   * the stream by then, so a notification sent afterwards travels on it) until it closes.
   * handleRequest cannot tell: it resolves only when the stream ends.
   */
  function countEventStreamOnceOpen(res: http.ServerResponse) {
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => http.ServerResponse;
    res.writeHead = ((...args: unknown[]) => {
      if (args[0] === 200) {
        eventStreams++;
        res.once('close', () => eventStreams--);
      }
      return writeHead(...args);
    }) as typeof res.writeHead;
  }

  const app = express();
  app.use(express.json({ limit: '1mb' }));
  if (options.bearerToken !== undefined) {
    const expected = `Bearer ${options.bearerToken}`;
    app.use((req, res, next) => {
      if (req.headers.authorization !== expected) {
        res
          .status(401)
          .json({ jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' }, id: null });
        return;
      }
      next();
    });
  }

  app.all('/mcp', async (req, res) => {
    const sessionId = req.header('mcp-session-id');
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (!session) {
        res.status(404).json({
          jsonrpc: '2.0',
          error: { code: -32001, message: 'Session not found' },
          id: null,
        });
        return;
      }
      if (req.method === 'GET') countEventStreamOnceOpen(res);
      await session.transport.handleRequest(req, res, req.body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      res.status(400).json({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Bad Request: no session id' },
        id: null,
      });
      return;
    }
    const { server, dynamicTools } = createSessionServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: id => {
        const session = { transport, server, dynamicTools };
        sessions.set(id, session);
        for (const name of dynamicToolNames) registerDynamicTool(session, name);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  const { url, port, closeHttp } = await listenHttp(http.createServer(app), options);
  return {
    url,
    port,
    sessionCount: () => sessions.size,
    openEventStreams: () => eventStreams,
    announcePromptsChanged() {
      for (const session of sessions.values()) session.server.sendPromptListChanged();
    },
    addTool: name => {
      addDynamicTool(name);
    },
    cancelledToolCalls: () => cancelledToolCalls,
    async close() {
      for (const session of sessions.values()) await session.transport.close();
      sessions.clear();
      await closeHttp();
    },
  };
}
