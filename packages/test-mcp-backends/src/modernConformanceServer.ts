/*
 * The 2026-07-28 half of the conformance scenario backend: an SDK v2 (`@modelcontextprotocol/
 * server` 2.4.0) server with the tools, resources and prompts that
 * `@modelcontextprotocol/conformance@0.2.0-alpha.12 server --requirements 2026-07-28` calls
 * (the same names and contents as the legacy half in conformanceBackend.ts, plus the
 * `test_input_required_result_*` tools, `test_custom_header_echo` (an `x-mcp-header` argument)
 * and the stateless diagnostics `test_missing_capability`, `test_streaming_elicitation`,
 * `test_logging_tool`, `test_trigger_tool_change` and `test_trigger_prompt_change`). Written
 * from the scenarios' stated requirements against the SDK's low-level `Server`, so tool lists can
 * change at run time and schemas stay plain JSON.
 *
 * Served by `createMcpHandler(…, { legacy: 'reject' })`: a fresh server per request, no state
 * between requests except what rides in `requestState` (HMAC-sealed by the SDK's codec with a key
 * of this process, so a tampered state is refused with -32602) and the flags the two trigger
 * tools flip. Change events go to `subscriptions/listen` streams through `handler.notify`.
 */
import { randomBytes } from 'node:crypto';
import {
  acceptedContent,
  createMcpHandler,
  createRequestStateCodec,
  inputRequired,
  MissingRequiredClientCapabilityError,
  ResourceNotFoundError,
  Server,
  type CallToolResult,
  type InputRequests,
  type McpHttpHandler,
  type ServerContext,
} from '@modelcontextprotocol/server';
import {
  type ChangeKind,
  changeTools,
  type ChangeToggles,
  CONTENT_TOOLS,
  INPUT_TOOLS,
  NO_ARGS,
  PROMPTS,
  RESOURCE_TEMPLATES,
  RESOURCES,
  contentPrompt,
  readContentResource,
} from './conformanceContent';

type Args = Record<string, unknown>;

/** The input request key of the INPUT_TOOLS (one question each). */
const INPUT_KEY = 'answer';
type ToolResult = CallToolResult | ReturnType<typeof inputRequired>;
interface Tool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  run(args: Args, ctx: ServerContext): Promise<ToolResult>;
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));
const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

const nameSchema = (property: string) => ({
  type: 'object' as const,
  properties: { [property]: { type: 'string' as const } },
  required: [property],
});
const askName = (message = 'What is your name?') =>
  inputRequired.elicit({ message, requestedSchema: nameSchema('name') });
const askCapital = () =>
  inputRequired.createMessage({
    messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
    maxTokens: 100,
  });

/** What the multi-step tools keep in their (sealed) requestState. */
type FlowState =
  | { tool: 'request_state'; step: 'confirm' }
  | { tool: 'multiple_inputs'; step: 'all' }
  | { tool: 'multi_round'; step: 'step1' }
  | { tool: 'multi_round'; step: 'step2'; name: string }
  | { tool: 'tampered_state'; step: 'check' };

/** Reads the text of an accepted sampling answer (a bare CreateMessageResult). */
function samplingText(response: unknown): string | undefined {
  const content = (response as { content?: unknown } | undefined)?.content;
  const block = Array.isArray(content) ? content[0] : content;
  return (block as { type?: string; text?: string } | undefined)?.type === 'text'
    ? (block as { text: string }).text
    : undefined;
}

function declared(ctx: ServerContext): Record<string, unknown> {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.['io.modelcontextprotocol/clientCapabilities'] ?? {}) as Record<
    string,
    unknown
  >;
}

/** Flags the diagnostic trigger tools flip (shared by every per-request server instance). */
type Toggles = ChangeToggles;

function tools(
  seal: (state: FlowState) => Promise<string>,
  toggles: Toggles,
  handler: () => McpHttpHandler,
  announceToOtherEra: ((kind: ChangeKind) => Promise<void>) | undefined,
): Tool[] {
  const list: Tool[] = [
    ...CONTENT_TOOLS.map(({ name, description, result }) => ({
      name,
      description,
      inputSchema: NO_ARGS,
      run: async () => result as CallToolResult,
    })),
    // The 2025 half's sampling and elicitation tools, asking through input_required here.
    ...INPUT_TOOLS.map(tool => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      run: async (args: Args, ctx: ServerContext): Promise<ToolResult> => {
        const answer = ctx.mcpReq.inputResponses?.[INPUT_KEY];
        if (answer === undefined) {
          const { method, params } = tool.ask(args);
          const request =
            method === 'sampling/createMessage'
              ? inputRequired.createMessage(params as never)
              : inputRequired.elicit(params as never);
          return inputRequired({ inputRequests: { [INPUT_KEY]: request } });
        }
        return text(tool.answer(answer as Record<string, unknown>));
      },
    })),
    {
      name: 'test_tool_with_progress',
      description: 'Reports progress',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        for (const progress of [0, 50, 100]) {
          if (progressToken !== undefined) {
            await ctx.mcpReq.notify({
              method: 'notifications/progress',
              params: { progressToken, progress, total: 100 },
            });
          }
          if (progress < 100) await sleep(50);
        }
        return text('Progress test completed');
      },
    },
    {
      name: 'test_logging_tool',
      description: 'Logs (only when the request asked for a log level)',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        await ctx.mcpReq.log('info', 'test_logging_tool ran');
        return text('Logging tool completed');
      },
    },
    {
      // For http-custom-header-server-validation (pending in 0.2.0-alpha.12): a string argument
      // mirrored into `Mcp-Param-Region`. This low-level Server does not check the header (the
      // SDK checks only McpServer tools); through the broker, the broker does.
      name: 'test_custom_header_echo',
      description: 'Echoes its region, which clients mirror into the Mcp-Param-Region header',
      inputSchema: {
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      },
      run: async args => text(`region: ${String(args.region)}`),
    },
    {
      name: 'test_missing_capability',
      description: 'Needs the sampling capability',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        if (declared(ctx).sampling === undefined) {
          throw new MissingRequiredClientCapabilityError({
            requiredCapabilities: { sampling: {} },
          });
        }
        return text('sampling declared');
      },
    },
    {
      name: 'test_streaming_elicitation',
      description: 'Streams progress, then asks for input in-band',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress: 1, total: 2 },
          });
        }
        if (acceptedContent(ctx.mcpReq.inputResponses, 'user_name') !== undefined) {
          return text('streaming elicitation answered');
        }
        return inputRequired({ inputRequests: { user_name: askName() } });
      },
    },
    ...changeTools(toggles, async kind => {
      await announceToListeners(handler(), kind);
      await announceToOtherEra?.(kind);
    }),
    {
      name: 'test_input_required_result_elicitation',
      description: 'Asks for the user name in-band',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const answer = acceptedContent<{ name?: unknown }>(ctx.mcpReq.inputResponses, 'user_name');
        if (typeof answer?.name !== 'string') {
          // Missing, declined or malformed: ask again (mrtr.mdx §Error Handling).
          return inputRequired({ inputRequests: { user_name: askName() } });
        }
        return text(`Hello, ${answer.name}!`);
      },
    },
    {
      name: 'test_input_required_result_sampling',
      description: 'Asks the client to sample in-band',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const answer = samplingText(ctx.mcpReq.inputResponses?.capital_question);
        if (answer === undefined) {
          return inputRequired({ inputRequests: { capital_question: askCapital() } });
        }
        return text(`The model said: ${answer}`);
      },
    },
    {
      name: 'test_input_required_result_list_roots',
      description: 'Asks for the client roots in-band',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const roots = (ctx.mcpReq.inputResponses?.client_roots as { roots?: unknown } | undefined)
          ?.roots;
        if (!Array.isArray(roots)) {
          return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
        }
        const uris = roots.map(root => (root as { uri?: unknown }).uri).filter(Boolean);
        return text(`Roots: ${uris.join(', ')}`);
      },
    },
    {
      name: 'test_input_required_result_request_state',
      description: 'Round-trips a sealed requestState',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const state = ctx.mcpReq.requestState<FlowState>();
        const ok = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
        if (state?.tool === 'request_state' && ok !== undefined) {
          return text('state-ok: the requestState came back intact');
        }
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: 'Please confirm',
              requestedSchema: {
                type: 'object',
                properties: { ok: { type: 'boolean' } },
                required: ['ok'],
              },
            }),
          },
          requestState: await seal({ tool: 'request_state', step: 'confirm' }),
        });
      },
    },
    {
      name: 'test_input_required_result_multiple_inputs',
      description: 'Asks for elicitation, sampling and roots at once',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const responses = ctx.mcpReq.inputResponses ?? {};
        const state = ctx.mcpReq.requestState<FlowState>();
        const all = ['user_name', 'greeting', 'client_roots'].every(key => key in responses);
        if (state?.tool === 'multiple_inputs' && all) {
          const name = acceptedContent<{ name?: string }>(responses, 'user_name')?.name;
          return text(`Got all three inputs (name: ${name ?? 'unknown'})`);
        }
        const inputRequests: InputRequests = {
          user_name: askName(),
          greeting: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        };
        return inputRequired({
          inputRequests,
          requestState: await seal({ tool: 'multiple_inputs', step: 'all' }),
        });
      },
    },
    {
      name: 'test_input_required_result_multi_round',
      description: 'Two rounds of input with an evolving requestState',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const state = ctx.mcpReq.requestState<FlowState>();
        const responses = ctx.mcpReq.inputResponses;
        if (state?.tool === 'multi_round' && state.step === 'step2') {
          const color = acceptedContent<{ color?: string }>(responses, 'step2')?.color;
          if (typeof color === 'string') return text(`${state.name} likes ${color}`);
        }
        if (state?.tool === 'multi_round') {
          const name =
            state.step === 'step2'
              ? state.name
              : acceptedContent<{ name?: string }>(responses, 'step1')?.name;
          if (typeof name === 'string') {
            return inputRequired({
              inputRequests: {
                step2: inputRequired.elicit({
                  message: 'Step 2: What is your favorite color?',
                  requestedSchema: nameSchema('color'),
                }),
              },
              requestState: await seal({ tool: 'multi_round', step: 'step2', name }),
            });
          }
        }
        return inputRequired({
          inputRequests: { step1: askName('Step 1: What is your name?') },
          requestState: await seal({ tool: 'multi_round', step: 'step1' }),
        });
      },
    },
    {
      name: 'test_input_required_result_tampered_state',
      description: 'Issues a sealed requestState and refuses an altered one',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        // A tampered state never gets here: the SDK's verify hook answers -32602 first.
        if (ctx.mcpReq.requestState<FlowState>()?.tool === 'tampered_state') {
          return text('state verified');
        }
        return inputRequired({
          inputRequests: { user_name: askName() },
          requestState: await seal({ tool: 'tampered_state', step: 'check' }),
        });
      },
    },
    {
      name: 'test_input_required_result_capabilities',
      description: 'Asks only for what the client declared',
      inputSchema: NO_ARGS,
      run: async (_args, ctx) => {
        const capabilities = declared(ctx);
        const responses = ctx.mcpReq.inputResponses ?? {};
        if (Object.keys(responses).length > 0) return text('inputs received');
        const inputRequests: InputRequests = {};
        if (capabilities.elicitation !== undefined) inputRequests.user_name = askName();
        if (capabilities.sampling !== undefined) inputRequests.capital_question = askCapital();
        if (capabilities.roots !== undefined)
          inputRequests.client_roots = inputRequired.listRoots();
        if (Object.keys(inputRequests).length === 0) {
          return text('the client declared no capability to ask through');
        }
        return inputRequired({ inputRequests });
      },
    },
  ];
  return list;
}

function prompts(toggles: Toggles) {
  const list: Array<{
    name: string;
    title?: string;
    description: string;
    arguments?: Array<{ name: string; description: string; required: boolean }>;
  }> = [
    ...PROMPTS,
    {
      name: 'test_input_required_result_prompt',
      description: 'A prompt that asks for context in-band',
    },
  ];
  if (toggles.extraPrompt) {
    list.push({ name: 'test_dynamic_prompt', description: 'Added by test_trigger_prompt_change' });
  }
  return list;
}

function getPrompt(name: string, args: Record<string, string>, ctx: ServerContext) {
  const user = (content: unknown) => ({ role: 'user' as const, content });
  switch (name) {
    case 'test_dynamic_prompt':
      return { messages: [user({ type: 'text', text: 'A dynamic prompt.' })] };
    case 'test_input_required_result_prompt': {
      const context = acceptedContent<{ context?: string }>(
        ctx.mcpReq.inputResponses,
        'user_context',
      )?.context;
      if (typeof context !== 'string') {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: nameSchema('context'),
            }),
          },
        });
      }
      return { messages: [user({ type: 'text', text: `Use this context: ${context}` })] };
    }
    default: {
      const prompt = contentPrompt(name, args);
      if (prompt === undefined) throw new Error(`Unknown prompt ${name}`);
      return prompt;
    }
  }
}

function readResource(uri: string) {
  // -32602 with the URI in data (SEP-2164), never an empty contents array.
  const resource = readContentResource(uri);
  if (resource === undefined) throw new ResourceNotFoundError(uri);
  return resource;
}

/** Options of {@link createModernConformanceHandler}. */
export interface ModernConformanceOptions {
  /** The trigger tools' state, shared with the backend's 2025 half (default: its own). */
  toggles?: ChangeToggles;
  /** Tells the 2025 half's sessions of a change this half made. */
  announceToOtherEra?: (kind: ChangeKind) => Promise<void>;
}

/** Announces a change on the handler's listen streams. */
export async function announceToListeners(handler: McpHttpHandler, kind: ChangeKind) {
  await (kind === 'tools' ? handler.notify.toolsChanged() : handler.notify.promptsChanged());
}

/**
 * The 2026-07-28 request handler (web-standard `fetch`), modern requests only: legacy traffic
 * is routed elsewhere by the caller (`isLegacyRequest`).
 */
export function createModernConformanceHandler(
  options: ModernConformanceOptions = {},
): McpHttpHandler {
  const codec = createRequestStateCodec<FlowState>({ key: randomBytes(32), ttlSeconds: 600 });
  const toggles: Toggles = options.toggles ?? { extraTool: false, extraPrompt: false };
  // The trigger tools publish through the handler that serves them (set below).
  const served: { handler?: McpHttpHandler } = {};
  const self = (): McpHttpHandler => served.handler!;

  const factory = () => {
    const server = new Server(
      { name: 'mcp-conformance-test-server', version: '1.0.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true },
          prompts: { listChanged: true },
          logging: {},
          completions: {},
        },
        requestState: { verify: codec.verify },
      },
    );
    const current = tools(state => codec.mint(state), toggles, self, options.announceToOtherEra);
    server.setRequestHandler('tools/list', async () => ({
      tools: current.map(({ name, description, inputSchema }) => ({
        name,
        description,
        inputSchema,
      })),
    }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const tool = current.find(t => t.name === request.params.name);
      if (!tool) {
        return {
          isError: true,
          content: [{ type: 'text' as const, text: `Unknown tool ${request.params.name}` }],
        };
      }
      return (await tool.run((request.params.arguments ?? {}) as Args, ctx)) as CallToolResult;
    });
    server.setRequestHandler('resources/list', async () => ({ resources: RESOURCES }));
    server.setRequestHandler('resources/templates/list', async () => ({
      resourceTemplates: RESOURCE_TEMPLATES,
    }));
    server.setRequestHandler('resources/read', async request => readResource(request.params.uri));
    server.setRequestHandler('prompts/list', async () => ({ prompts: prompts(toggles) }));
    server.setRequestHandler(
      'prompts/get',
      async (request, ctx) =>
        getPrompt(
          request.params.name,
          (request.params.arguments ?? {}) as Record<string, string>,
          ctx,
        ) as never,
    );
    server.setRequestHandler('completion/complete', async () => ({
      completion: { values: [], total: 0, hasMore: false },
    }));
    return server;
  };

  served.handler = createMcpHandler(factory, { legacy: 'reject' });
  return served.handler;
}
