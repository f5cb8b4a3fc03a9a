/*
 * The 2026-07-28 scenario tools for the 2025-11-25 half of the conformance backend, written the
 * 2025 way: where the modern half answers `input_required`, these send real server-to-client
 * requests (`elicitation/create`, `sampling/createMessage`, `roots/list`) on the call's POST
 * stream with the SDK 1.x server API, and the trigger tools announce list changes on every
 * session's GET stream. Same names and same final texts as modernConformanceServer.ts, so that
 * `conformance server --requirements 2026-07-28` run through a broker that speaks 2025-11-25 to
 * this backend exercises the broker's translation (push-style requests become `input_required`
 * rounds for a 2026-07-28 client, list changes reach its `subscriptions/listen` stream).
 *
 * Failure modes: a client that cannot answer (no capability, gone) makes the SDK's sendRequest
 * reject; the tool then fails with an error result (the caller wraps it), as a real tool would.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  type CallToolResult,
  type GetPromptResult,
} from '@modelcontextprotocol/sdk/types.js';
import { type ChangeKind, changeTools, type ChangeToggles, NO_ARGS } from './conformanceContent';

/** The request handler context of an SDK 1.x server. */
export type LegacyExtra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];

/** A tool of the 2025-11-25 half. */
export interface LegacyTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: 'object' };
  run(args: Record<string, any>, extra: LegacyExtra): Promise<CallToolResult>;
}

/** What the trigger tools change, shared by every session of one backend. */
export interface LegacySharedState extends ChangeToggles {
  /** The live session servers (each announces changes on its own GET stream). */
  readonly servers: Set<Server>;
  /**
   * Tells the backend's 2026-07-28 half (its listen streams) too: one backend, one state, so a
   * client hears a change whichever era it listens with and whichever era made it.
   */
  announceToOtherEra?: (kind: ChangeKind) => Promise<void>;
}

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

const nameSchema = (property: string) => ({
  type: 'object' as const,
  properties: { [property]: { type: 'string' as const } },
  required: [property],
});

/** Sends an elicitation on the call's stream (related to the call, as the spec says it SHOULD). */
export async function elicit(extra: LegacyExtra, params: Record<string, unknown>) {
  return extra.sendRequest(
    { method: 'elicitation/create', params: params as any },
    ElicitResultSchema,
  );
}

async function askName(extra: LegacyExtra, message = 'What is your name?') {
  const answer = await elicit(extra, { message, requestedSchema: nameSchema('name') });
  return answer.action === 'accept' ? (answer.content?.name as string | undefined) : undefined;
}

async function sample(extra: LegacyExtra, prompt: string, maxTokens: number) {
  const result = await extra.sendRequest(
    {
      method: 'sampling/createMessage',
      params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens },
    },
    CreateMessageResultSchema,
  );
  const content = result.content as { type: string; text?: string };
  return content.type === 'text' ? content.text : undefined;
}

async function listRoots(extra: LegacyExtra) {
  const { roots } = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
  return roots.map(root => root.uri);
}

/** Announces a change on every live 2025 session's GET stream. */
export async function announceToSessions(shared: LegacySharedState, kind: ChangeKind) {
  for (const server of shared.servers) {
    // A session whose client has gone cannot be told; the others still are.
    await (kind === 'tools' ? server.sendToolListChanged() : server.sendPromptListChanged()).catch(
      () => {},
    );
  }
}

async function announce(shared: LegacySharedState, kind: ChangeKind) {
  await announceToSessions(shared, kind);
  await shared.announceToOtherEra?.(kind);
}

/**
 * The push-style tools (and the trigger and diagnostic tools) of the 2026-07-28 scenarios;
 * `clientCapabilities` are those of the session the tools serve.
 */
export function pushStyleTools(
  shared: LegacySharedState,
  clientCapabilities: () => Record<string, unknown> | undefined,
): LegacyTool[] {
  const list: LegacyTool[] = [
    {
      name: 'test_input_required_result_elicitation',
      description: 'Asks for the user name during the call',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => text(`Hello, ${(await askName(extra)) ?? 'unknown'}!`),
    },
    {
      name: 'test_input_required_result_sampling',
      description: 'Asks the client to sample during the call',
      inputSchema: NO_ARGS,
      run: async (_args, extra) =>
        text(`The model said: ${await sample(extra, 'What is the capital of France?', 100)}`),
    },
    {
      name: 'test_input_required_result_list_roots',
      description: 'Asks for the client roots during the call',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => text(`Roots: ${(await listRoots(extra)).join(', ')}`),
    },
    {
      name: 'test_input_required_result_request_state',
      description: 'Asks for a confirmation during the call',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => {
        await elicit(extra, {
          message: 'Please confirm',
          requestedSchema: {
            type: 'object',
            properties: { ok: { type: 'boolean' } },
            required: ['ok'],
          },
        });
        return text('state-ok: the requestState came back intact');
      },
    },
    {
      name: 'test_input_required_result_multiple_inputs',
      description: 'Asks for elicitation, sampling and roots during the call',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => {
        const [name] = await Promise.all([
          askName(extra),
          sample(extra, 'Generate a greeting', 50),
          listRoots(extra),
        ]);
        return text(`Got all three inputs (name: ${name ?? 'unknown'})`);
      },
    },
    {
      name: 'test_input_required_result_multi_round',
      description: 'Two elicitations, one after the other',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => {
        const name = await askName(extra, 'Step 1: What is your name?');
        const answer = await elicit(extra, {
          message: 'Step 2: What is your favorite color?',
          requestedSchema: nameSchema('color'),
        });
        return text(`${name ?? 'unknown'} likes ${String(answer.content?.color ?? 'nothing')}`);
      },
    },
    {
      name: 'test_input_required_result_tampered_state',
      description: 'Asks for the user name (the broker seals the round)',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => {
        await askName(extra);
        return text('state verified');
      },
    },
    {
      name: 'test_input_required_result_capabilities',
      description: 'Asks only for what the client declared',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => {
        const declared = clientCapabilities() ?? {};
        const asks: Array<Promise<unknown>> = [];
        if (declared.elicitation !== undefined) asks.push(askName(extra));
        if (declared.sampling !== undefined) {
          asks.push(sample(extra, 'What is the capital of France?', 100));
        }
        if (declared.roots !== undefined) asks.push(listRoots(extra));
        if (asks.length === 0) return text('the client declared no capability to ask through');
        await Promise.all(asks);
        return text('inputs received');
      },
    },
    {
      name: 'test_missing_capability',
      description: 'Needs the sampling capability',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => {
        await sample(extra, 'Say something', 10);
        return text('sampling declared');
      },
    },
    {
      name: 'test_streaming_elicitation',
      description: 'Streams progress, then asks for input',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => {
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: 1, total: 2 },
          });
        }
        await askName(extra);
        return text('streaming elicitation answered');
      },
    },
    {
      name: 'test_logging_tool',
      description: 'Logs one message',
      inputSchema: NO_ARGS,
      run: async (_args, extra) => {
        await extra.sendNotification({
          method: 'notifications/message',
          params: { level: 'info', data: 'test_logging_tool ran' },
        });
        return text('Logging tool completed');
      },
    },
    ...changeTools(shared, kind => announce(shared, kind)),
  ];
  return list;
}

/** The prompts of the 2026-07-28 scenarios (listed after the shared ones). */
export function pushStylePrompts(shared: LegacySharedState) {
  return [
    {
      name: 'test_input_required_result_prompt',
      description: 'A prompt that asks for context while it is built',
    },
    ...(shared.extraPrompt
      ? [{ name: 'test_dynamic_prompt', description: 'Added by test_trigger_prompt_change' }]
      : []),
  ];
}

/** One of the prompts above, or undefined for another name. */
export async function pushStylePrompt(
  name: string,
  extra: LegacyExtra,
): Promise<GetPromptResult | undefined> {
  const user = (t: string) => ({
    role: 'user' as const,
    content: { type: 'text' as const, text: t },
  });
  if (name === 'test_dynamic_prompt') return { messages: [user('A dynamic prompt.')] };
  if (name !== 'test_input_required_result_prompt') return undefined;
  const answer = await elicit(extra, {
    message: 'What context should the prompt use?',
    requestedSchema: nameSchema('context'),
  });
  return { messages: [user(`Use this context: ${String(answer.content?.context ?? '')}`)] };
}
