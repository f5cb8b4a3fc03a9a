/*
 * One broker client per protocol era behind one interface, so that an era test is written once
 * and runs for both: `legacy` is the official SDK 1.x client (2025-11-25: a session, change events
 * on its GET stream, elicitation as a server-to-client request on the call's stream); `modern` is
 * the official SDK v2 client pinned to 2026-07-28 (stateless: change events over
 * `subscriptions/listen`, elicitation as `input_required` that the SDK answers and retries).
 * Both declare elicitation and answer every elicitation with one fixed answer, recording what
 * they were asked, and may send their answers to another replica than their requests
 * (`answersTo`, for the multi-replica tests), recording where each answer went.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { eventStreamWatchingFetch } from '../brokerTestKit';
import { answerRoutingFetch, RoutedAnswer } from './answerRouting';
import { connectModernClient } from './modernBrokerClient';

/** A protocol era: 2025-11-25 (`legacy`, sessions) or 2026-07-28 (`modern`, stateless). */
export type Era = 'legacy' | 'modern';

/** Both eras, for tables. */
export const ERAS: readonly Era[] = ['legacy', 'modern'];

/** Every (client era, backend era) pair: the rows of the era matrices. */
export const ERA_COMBINATIONS: ReadonlyArray<[client: Era, backend: Era]> = ERAS.flatMap(client =>
  ERAS.map((backend): [Era, Era] => [client, backend]),
);

/** What every client answers to an elicitation. */
export const ELICITATION_ANSWER = { action: 'accept', content: { confirmed: true } } as const;

const CHANGE_KINDS = ['tools', 'prompts', 'resources'] as const;

/** Options of one tool call. */
export interface EraCallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: number) => void;
}

/** A broker client of either era. */
export interface EraClient {
  era: Era;
  /** The tool names the broker lists to this client. */
  toolNames(): Promise<string[]>;
  /** Calls a tool: the text of its first content item and every progress value seen. */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: EraCallOptions,
  ): Promise<{ text: string; progress: number[] }>;
  /** The params of every elicitation the broker asked this client, in order. */
  readonly elicitations: unknown[];
  /** The `notifications/<kind>/list_changed` methods received, in order. */
  readonly notifications: string[];
  /**
   * Every answer the client sent (legacy: an elicitation's answer POSTed; modern: a request
   * retried with `inputResponses`), where it went and the status it got.
   */
  readonly answers: RoutedAnswer[];
  /**
   * Resolves once the client's change channel is registered at the broker (legacy: its GET
   * stream answered 200; modern: `subscriptions/listen` for every kind acknowledged), so a
   * change from then on reaches it.
   */
  listenForChanges(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link connectEraClient}. */
export interface EraClientOptions {
  /**
   * The base URL of the broker replica that gets the client's answers (default: the one it
   * connects to), as a load balancer without stickiness may send them elsewhere.
   */
  answersTo?: string;
}

/** Connects a client of `era` to the broker at `baseUrl` with a Backstage token. */
export function connectEraClient(
  era: Era,
  baseUrl: string,
  token: string,
  options: EraClientOptions = {},
): Promise<EraClient> {
  const answers: RoutedAnswer[] = [];
  const routing = answerRoutingFetch(baseUrl, options.answersTo ?? baseUrl, answers);
  return era === 'legacy'
    ? connectLegacy(baseUrl, token, routing, answers)
    : connectModern(baseUrl, token, routing, answers);
}

const firstText = (result: Record<string, unknown>) =>
  String((result.content as Array<{ text?: unknown }> | undefined)?.[0]?.text);

async function connectLegacy(
  baseUrl: string,
  token: string,
  routing: FetchLike,
  answers: RoutedAnswer[],
): Promise<EraClient> {
  const { fetch: watchingFetch, eventStreamOpen } = eventStreamWatchingFetch(routing);
  const client = new Client(
    { name: 'broker-era-e2e', version: '1.0.0' },
    { capabilities: { elicitation: {} } },
  );
  const elicitations: unknown[] = [];
  const notifications: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, async request => {
    elicitations.push(request.params);
    return ELICITATION_ANSWER;
  });
  client.fallbackNotificationHandler = async notification => {
    notifications.push(notification.method);
  };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp-broker/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch: watchingFetch,
    }),
  );
  return {
    era: 'legacy',
    elicitations,
    notifications,
    answers,
    toolNames: async () => (await client.listTools()).tools.map(tool => tool.name),
    async callTool(name, args, options = {}) {
      const progress: number[] = [];
      const result = await client.callTool({ name, arguments: args }, undefined, {
        signal: options.signal,
        onprogress: p => {
          progress.push(p.progress);
          options.onprogress?.(p.progress);
        },
      });
      return { text: firstText(result), progress };
    },
    // The SDK opens the GET stream by itself after connect().
    listenForChanges: () => eventStreamOpen,
    close: () => client.close().catch(() => undefined),
  };
}

async function connectModern(
  baseUrl: string,
  token: string,
  routing: FetchLike,
  answers: RoutedAnswer[],
): Promise<EraClient> {
  const client = await connectModernClient(baseUrl, token, { elicitation: {} }, routing);
  const elicitations: unknown[] = [];
  const notifications: string[] = [];
  client.setRequestHandler('elicitation/create', async request => {
    elicitations.push(request.params);
    return ELICITATION_ANSWER;
  });
  for (const kind of CHANGE_KINDS) {
    client.setNotificationHandler(`notifications/${kind}/list_changed`, async () => {
      notifications.push(`notifications/${kind}/list_changed`);
    });
  }
  return {
    era: 'modern',
    elicitations,
    notifications,
    answers,
    toolNames: async () => (await client.listTools()).tools.map(tool => tool.name),
    async callTool(name, args, options = {}) {
      const progress: number[] = [];
      const result = await client.callTool(
        { name, arguments: args },
        {
          signal: options.signal,
          onprogress: (p: { progress: number }) => {
            progress.push(p.progress);
            options.onprogress?.(p.progress);
          },
        },
      );
      return { text: firstText(result), progress };
    },
    async listenForChanges() {
      // Resolves with the acknowledgement, which the broker sends once the stream is registered.
      await client.listen({
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
      });
    },
    close: () => client.close().catch(() => undefined),
  };
}
