/*
 * The MCP methods the broker knows, one entry each: the only place a method is described. A
 * client's request names the eras the broker serves it in, what its params must hold (checked
 * in one place, {@link invalidParamsOf}, with one wording), which member its `Mcp-Name` header
 * mirrors, whether a backend may answer it with `input_required`, the permission that guards
 * it, whether it reaches a backend with a person's credential, whether it counts against the
 * rate limits, its audit event and how telemetry names it. The other entries (server-to-client
 * requests, notifications) say only that the specification has them and who sends them. The
 * router binds a handler to every client request served here (router/methodTable.ts); every
 * other file asks this table instead of naming methods.
 *
 * Permissions (spec §8): `mcp-broker.session.create` guards `initialize` and every 2026-07-28
 * request (the admission chain checks it); the item permissions (tool.use, prompt.use,
 * resource.read) are applied by the permitted catalog the route is resolved in, so an item the
 * principal may not use answers like one that exists nowhere.
 *
 * Limits (spec §11.1, §12): a method that reaches a backend on a person's behalf (with their
 * credential, or triggering an exchange for it) is `limited`: the rate limits count it unless
 * `mcpBroker.rateLimits.methods` leaves it out.
 *
 * No HTTP here and no handlers: plain data and pure functions.
 */
import type { BasicPermission, ResourcePermission } from '@backstage/plugin-permission-common';
import {
  mcpBrokerPromptUsePermission,
  mcpBrokerResourceReadPermission,
  mcpBrokerSessionCreatePermission,
  mcpBrokerToolUsePermission,
} from '@devportal/plugin-mcp-broker-common';
import { isPlainObject } from './jsonRpc';
import { LIST_CHANGED_METHOD } from './listKinds';
import { declaresExtension, TASKS_EXTENSION } from './modernTasks';
import type { ProtocolEra } from './modernEra';

/** One member a method's params must hold: what it must be, in words, and the test of it. */
export interface ParamRule {
  /** What the member must be, as the `-32602` message says it (`a string`). */
  readonly description: string;
  readonly test: (value: unknown) => boolean;
}

/** The body members an `Mcp-Name` header may mirror. */
export type McpNameSource = 'name' | 'uri' | 'taskId';

/** How telemetry names a method's requests (OpenTelemetry semantic conventions for MCP). */
export interface MethodTelemetry {
  /** `gen_ai.operation.name`; `execute_tool` requests also count as calls in flight. */
  readonly operation?: 'execute_tool';
}

/** A request a client sends to the broker. */
export interface ClientRequestMethod {
  readonly kind: 'client-request';
  /** The protocol eras the broker serves it in (any other era answers "method not found"). */
  readonly eras: readonly ProtocolEra[];
  /** The members its params must hold, checked before its handler runs ({@link invalidParamsOf}). */
  readonly params?: Readonly<Record<string, ParamRule>>;
  /**
   * The body member its `Mcp-Name` header mirrors (2026-07-28 `streamable-http.mdx`; the tasks
   * extension's `tasks/get`, `tasks/update` and `tasks/cancel` mirror `taskId`).
   */
  readonly mcpName?: McpNameSource;
  /**
   * The kind of item it addresses by `params.name` / `params.uri`: telemetry records a tool's or
   * prompt's own name (never a resource's URI), rate limits may name a tool, and only tools
   * declare `x-mcp-header` arguments.
   */
  readonly item?: 'tool' | 'prompt' | 'resource';
  /**
   * Its result is a tool result: a failure after admission (a person's credential missing or
   * refused) is answered as a result with `isError: true`, not as a JSON-RPC error.
   */
  readonly toolResult?: true;
  /**
   * The client extension a 2026-07-28 request of it must declare in its `_meta` client
   * capabilities (the tasks extension's `tasks/*`): else -32021, HTTP 400, before its params are
   * checked ({@link missingExtensionOf}). Session-era requests have no extensions to declare.
   */
  readonly extension?: string;
  /** A backend may answer it with `input_required` (`mrtr.mdx` §Supported Requests). */
  readonly inputRequired?: true;
  /** The permission that guards it (see the file comment). */
  readonly permission?: BasicPermission | ResourcePermission;
  /** It reaches a backend that acts with each person's identity with that person's credential. */
  readonly personalCredential?: true;
  /**
   * It reaches a backend on the person's behalf: counted by the rate limits (spec §12), unless
   * `mcpBroker.rateLimits.methods` leaves it out.
   */
  readonly limited?: true;
  /**
   * `tool-call`: every request is one `mcp-broker.tool-call` audit event; `task`: one
   * `mcp-broker.task` event per operation (docs/contracts/tasks-and-apps.md §2.14).
   */
  readonly audit?: 'tool-call' | 'task';
  /**
   * How its answer may be given: `json`, one JSON document; `call`, streamed when the backend
   * sends more than its result (a session's audited call is always a stream, spec §4).
   */
  readonly answer: 'json' | 'call';
  /** `initialize`: the request opens a session (it must come without one). */
  readonly opensSession?: true;
  readonly telemetry?: MethodTelemetry;
}

/** A request a server sends (to the broker, or through it to a client). */
export interface ServerRequestMethod {
  readonly kind: 'server-request';
  /** It may be carried in an `input_required` result to a 2026-07-28 client. */
  readonly inputRequest?: true;
}

/** A notification (either direction). */
export interface NotificationMethod {
  readonly kind: 'notification';
}

/** One method of the table. */
export type McpMethod = ClientRequestMethod | ServerRequestMethod | NotificationMethod;

const BOTH: readonly ProtocolEra[] = ['legacy', 'modern'];
const SESSION_ERA: readonly ProtocolEra[] = ['legacy'];
const MODERN_ERA: readonly ProtocolEra[] = ['modern'];

const A_STRING: ParamRule = { description: 'a string', test: value => typeof value === 'string' };

/** `completion/complete`'s reference: a prompt by name or a resource (template) by URI. */
const A_COMPLETION_REF: ParamRule = {
  description: '{type: "ref/prompt", name} or {type: "ref/resource", uri}',
  test: ref =>
    isPlainObject(ref) &&
    ((ref.type === 'ref/prompt' && typeof ref.name === 'string') ||
      (ref.type === 'ref/resource' && typeof ref.uri === 'string')),
};

/** A broker task id as a client may send it (docs/contracts/tasks-and-apps.md §2.7 step 2). */
const A_TASK_ID: ParamRule = {
  description: 'a string of at most 300 characters',
  test: value => typeof value === 'string' && value.length <= 300,
};

/**
 * A 2025-11-25 task operation on one task (contract tasks-and-apps §6): answered for the task's
 * owner only, after `mcp-broker.tool.use` of the task's tool is checked again.
 */
const LEGACY_TASK_OPERATION = {
  kind: 'client-request',
  eras: SESSION_ERA,
  params: { taskId: A_TASK_ID },
  permission: mcpBrokerToolUsePermission,
  audit: 'task',
  answer: 'json',
} as const satisfies ClientRequestMethod;

/**
 * A task operation of both eras (`tasks/get`, `tasks/cancel`): a 2026-07-28 request's `Mcp-Name`
 * mirrors `params.taskId` (contract tasks-and-apps §2.7, E6).
 */
const TASK_OPERATION = {
  ...LEGACY_TASK_OPERATION,
  eras: BOTH,
  mcpName: 'taskId',
  extension: TASKS_EXTENSION,
} as const satisfies ClientRequestMethod;

/** `tasks/update`'s answers: each input request key of the task mapped to its result object. */
const AN_INPUT_RESPONSES_MAP: ParamRule = {
  description: 'an object mapping each input request key to its result object',
  test: value =>
    isPlainObject(value) && Object.values(value).every(answer => isPlainObject(answer)),
};

const NOTIFICATION: NotificationMethod = { kind: 'notification' };

/** Every method the broker knows (see the file comment). */
export const MCP_METHODS: Readonly<Record<string, McpMethod>> = Object.freeze({
  initialize: {
    kind: 'client-request',
    eras: SESSION_ERA,
    permission: mcpBrokerSessionCreatePermission,
    answer: 'json',
    opensSession: true,
  },
  ping: { kind: 'client-request', eras: SESSION_ERA, answer: 'json' },
  'server/discover': { kind: 'client-request', eras: MODERN_ERA, answer: 'json' },
  'tools/list': {
    kind: 'client-request',
    eras: BOTH,
    permission: mcpBrokerToolUsePermission,
    answer: 'json',
  },
  'prompts/list': {
    kind: 'client-request',
    eras: BOTH,
    permission: mcpBrokerPromptUsePermission,
    answer: 'json',
  },
  'resources/list': {
    kind: 'client-request',
    eras: BOTH,
    permission: mcpBrokerResourceReadPermission,
    answer: 'json',
  },
  'resources/templates/list': {
    kind: 'client-request',
    eras: BOTH,
    permission: mcpBrokerResourceReadPermission,
    answer: 'json',
  },
  'tools/call': {
    kind: 'client-request',
    eras: BOTH,
    params: { name: A_STRING },
    mcpName: 'name',
    item: 'tool',
    toolResult: true,
    inputRequired: true,
    permission: mcpBrokerToolUsePermission,
    personalCredential: true,
    limited: true,
    audit: 'tool-call',
    answer: 'call',
    telemetry: { operation: 'execute_tool' },
  },
  'prompts/get': {
    kind: 'client-request',
    eras: BOTH,
    params: { name: A_STRING },
    mcpName: 'name',
    item: 'prompt',
    inputRequired: true,
    permission: mcpBrokerPromptUsePermission,
    personalCredential: true,
    limited: true,
    answer: 'call',
  },
  'resources/read': {
    kind: 'client-request',
    eras: BOTH,
    params: { uri: A_STRING },
    mcpName: 'uri',
    item: 'resource',
    inputRequired: true,
    permission: mcpBrokerResourceReadPermission,
    personalCredential: true,
    limited: true,
    answer: 'call',
  },
  'completion/complete': {
    kind: 'client-request',
    eras: BOTH,
    params: { ref: A_COMPLETION_REF },
    personalCredential: true,
    limited: true,
    answer: 'json',
  },
  'subscriptions/listen': { kind: 'client-request', eras: MODERN_ERA, answer: 'json' },
  // Long-running tasks (docs/contracts/tasks-and-apps.md §2.7, §2.9): the 2025-11-25 capability
  // and the 2026-07-28 extension `io.modelcontextprotocol/tasks` (no tasks/result, tasks/list).
  'tasks/get': TASK_OPERATION,
  'tasks/result': { ...LEGACY_TASK_OPERATION, answer: 'call' },
  'tasks/update': {
    ...TASK_OPERATION,
    eras: MODERN_ERA,
    params: { taskId: A_TASK_ID, inputResponses: AN_INPUT_RESPONSES_MAP },
  },
  'tasks/cancel': TASK_OPERATION,
  'tasks/list': {
    kind: 'client-request',
    eras: SESSION_ERA,
    permission: mcpBrokerToolUsePermission,
    audit: 'task',
    answer: 'json',
  },
  // Deliberately not served (the router answers them): the broker relays neither log levels
  // nor resource subscriptions.
  'logging/setLevel': { kind: 'client-request', eras: SESSION_ERA, answer: 'json' },
  'resources/subscribe': { kind: 'client-request', eras: SESSION_ERA, answer: 'json' },
  'resources/unsubscribe': { kind: 'client-request', eras: SESSION_ERA, answer: 'json' },
  'elicitation/create': { kind: 'server-request', inputRequest: true },
  'sampling/createMessage': { kind: 'server-request', inputRequest: true },
  'roots/list': { kind: 'server-request', inputRequest: true },
  ...Object.fromEntries(Object.values(LIST_CHANGED_METHOD).map(m => [m, NOTIFICATION])),
  'notifications/initialized': NOTIFICATION,
  'notifications/cancelled': NOTIFICATION,
  'notifications/progress': NOTIFICATION,
  'notifications/message': NOTIFICATION,
  'notifications/resources/updated': NOTIFICATION,
  'notifications/elicitation/complete': NOTIFICATION,
} satisfies Record<string, McpMethod>);

/** The entry of `method` (an own entry only: a client may send `__proto__`). */
export function mcpMethod(method: string): McpMethod | undefined {
  return Object.hasOwn(MCP_METHODS, method) ? MCP_METHODS[method] : undefined;
}

/** The entry of `method` when it is a client request the broker serves in `era`. */
export function clientRequestMethod(
  method: string,
  era?: ProtocolEra,
): ClientRequestMethod | undefined {
  const entry = mcpMethod(method);
  if (entry?.kind !== 'client-request') return undefined;
  return era === undefined || entry.eras.includes(era) ? entry : undefined;
}

/** Every client request of the table, by name. */
export function clientRequestMethods(): Array<[string, ClientRequestMethod]> {
  return Object.entries(MCP_METHODS).filter(
    (pair): pair is [string, ClientRequestMethod] => pair[1].kind === 'client-request',
  );
}

/** The body member `method`'s `Mcp-Name` header mirrors, if it has one. */
export function mcpNameSource(method: string): McpNameSource | undefined {
  return clientRequestMethod(method)?.mcpName;
}

/**
 * The extension a 2026-07-28 request of `method` must declare and did not (`declared`: its
 * `_meta` client capabilities), or undefined when it needs none or declared it.
 */
export function missingExtensionOf(
  method: string,
  declared: Readonly<Record<string, unknown>> | undefined,
): string | undefined {
  const extension = clientRequestMethod(method, 'modern')?.extension;
  if (extension === undefined) return undefined;
  return declaresExtension(declared, extension) ? undefined : extension;
}

/** True for a server-to-client request that may be carried in an `input_required` result. */
export function isInputRequestMethod(method: string): boolean {
  const entry = mcpMethod(method);
  return entry?.kind === 'server-request' && entry.inputRequest === true;
}

/**
 * The `-32602` message of params that lack what `method`'s entry requires, or undefined when
 * they hold it (or the method requires nothing). One wording for every method:
 * `tools/call needs params.name (a string)`.
 */
export function invalidParamsOf(
  method: string,
  params: Record<string, unknown>,
): string | undefined {
  const rules = clientRequestMethod(method)?.params;
  if (rules === undefined) return undefined;
  for (const [member, rule] of Object.entries(rules)) {
    if (!rule.test(params[member])) return `${method} needs params.${member} (${rule.description})`;
  }
  return undefined;
}
