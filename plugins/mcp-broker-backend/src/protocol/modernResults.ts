/*
 * Shapes the broker sends to 2026-07-28 clients (docs/mcp-2026-07-28-notes.md §5–§9): the
 * `server/discover` result, cacheable results (`ttlMs`, `cacheScope`), `input_required` results,
 * the `subscriptions/listen` acknowledgement, tagged change notifications and closing result,
 * and capabilities without the tasks extension. Builders only: they never read the network and
 * never throw on client input (the filter parser reports what it dropped instead).
 */
import {
  isPlainObject,
  JsonRpcErrorCode,
  JsonRpcErrorObject,
  JsonRpcId,
  JsonRpcNotification,
} from './jsonRpc';
import { ListKind, LIST_CHANGED_METHOD } from './listKinds';
import { isInputRequestMethod } from './mcpMethods';
import { ModernMetaKey } from './modernEra';
import { TASKS_EXTENSION, withTasksExtension } from './modernTasks';
import { STORE_UNAVAILABLE_REASON } from './storeUnavailable';
import { ALL_PROTOCOL_VERSIONS, BROKER_IMPLEMENTATION } from './versions';

/** Who may cache a result: any cache (`public`) or only the same authorization (`private`). */
export type CacheScope = 'public' | 'private';

/** The caching hints every cacheable 2026-07-28 result carries. */
export interface CacheHints {
  /** Milliseconds the result may be considered fresh; an integer, at least 0. */
  ttlMs: number;
  cacheScope: CacheScope;
}

/** The `_meta` every result of the broker carries: who answered. */
export function serverInfoMeta(
  serverInfo: Readonly<Record<string, unknown>> = BROKER_IMPLEMENTATION,
): Record<string, unknown> {
  return { [ModernMetaKey.serverInfo]: { ...serverInfo } };
}

/**
 * A final (`resultType: "complete"`) result: the body as given, the broker's serverInfo added to
 * its `_meta` (a value already there, e.g. a backend's, is kept).
 */
export function completeResult(result: Record<string, unknown>): Record<string, unknown> {
  const meta = isPlainObject(result._meta) ? result._meta : {};
  return {
    ...result,
    resultType: 'complete',
    _meta: { ...serverInfoMeta(), ...meta },
  };
}

/** A complete result with caching hints (lists, `resources/read`, `server/discover`). */
export function cacheableResult(
  result: Record<string, unknown>,
  hints: CacheHints,
): Record<string, unknown> {
  return {
    ...completeResult(result),
    ttlMs: normaliseTtl(hints.ttlMs),
    cacheScope: hints.cacheScope,
  };
}

function normaliseTtl(ttlMs: number): number {
  return Number.isFinite(ttlMs) && ttlMs > 0 ? Math.floor(ttlMs) : 0;
}

/**
 * The `ttlMs` of an aggregated list: the smallest positive value among the backends' hints
 * (absent, zero, negative and non-numbers ignored), or `fallbackMs` when none has one.
 */
export function aggregatedTtlMs(backendTtls: Iterable<unknown>, fallbackMs: number): number {
  let smallest: number | undefined;
  for (const ttl of backendTtls) {
    if (typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0) {
      smallest = smallest === undefined ? ttl : Math.min(smallest, ttl);
    }
  }
  return normaliseTtl(smallest ?? fallbackMs);
}

/**
 * A copy of a capabilities object without the tasks extension (`extensions[TASKS_EXTENSION]`)
 * and without the 2025 `tasks` capability; an `extensions` object left empty is dropped.
 */
export function withoutTasks(
  capabilities: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const { tasks: _tasks, extensions, ...rest } = capabilities;
  if (!isPlainObject(extensions)) return extensions === undefined ? rest : { ...rest, extensions };
  const { [TASKS_EXTENSION]: _extension, ...others } = extensions;
  return Object.keys(others).length === 0 ? rest : { ...rest, extensions: others };
}

/** What the broker says about itself in `server/discover`. */
export interface DiscoverInput extends CacheHints {
  /** The aggregated server capabilities (the tasks extension is removed here). */
  capabilities: Record<string, unknown>;
  /** The broker relays the tasks extension (docs/contracts/tasks-and-apps.md §2.2): declared. */
  tasks?: boolean;
  instructions?: string;
}

/** The `server/discover` result: every version the broker speaks, capabilities, who it is. */
export function discoverResult(input: DiscoverInput): Record<string, unknown> {
  return cacheableResult(
    {
      supportedVersions: [...ALL_PROTOCOL_VERSIONS],
      capabilities: input.tasks
        ? withTasksExtension(withoutTasks(input.capabilities))
        : withoutTasks(input.capabilities),
      ...(input.instructions === undefined ? {} : { instructions: input.instructions }),
    },
    input,
  );
}

/** One server-to-client request carried in an `input_required` result (no jsonrpc, no id). */
export interface InputRequest {
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list';
  params?: Record<string, unknown>;
}

/**
 * A backend's server-to-client request as an input request: `jsonrpc` and `id` dropped,
 * `mode: "form"` made explicit on an elicitation without a mode (2026-07-28 names it; a 2025
 * backend's form elicitation has none). Undefined for a method that cannot be an input request.
 */
export function inputRequestFromServerRequest(
  method: string,
  params: Record<string, unknown> | undefined,
): InputRequest | undefined {
  if (!isInputRequestMethod(method)) return undefined;
  const request = { method } as InputRequest;
  if (method === 'elicitation/create') {
    request.params = { ...params, mode: params?.mode ?? 'form' };
  } else if (params !== undefined) {
    request.params = params;
  }
  return request;
}

/**
 * An `input_required` result. At least one of the two members is required by the
 * specification, so a call with neither throws (a broker bug, not client input).
 */
export function inputRequiredResult(input: {
  inputRequests?: Record<string, InputRequest>;
  requestState?: string;
}): Record<string, unknown> {
  if (input.inputRequests === undefined && input.requestState === undefined) {
    throw new Error('an input_required result needs inputRequests or requestState');
  }
  return {
    resultType: 'input_required',
    ...(input.inputRequests === undefined ? {} : { inputRequests: input.inputRequests }),
    ...(input.requestState === undefined ? {} : { requestState: input.requestState }),
    _meta: serverInfoMeta(),
  };
}

/** The retry members of a request that answers an `input_required` result. */
export interface InputRetry {
  /** Key of the input request → the client's result for it. */
  inputResponses?: Record<string, Record<string, unknown>>;
  requestState?: string;
}

/**
 * Reads `inputResponses` / `requestState` from a retry's params; a message (for -32602) when
 * they have the wrong shape.
 */
export function readInputRetry(params: unknown): InputRetry | { invalid: string } {
  if (!isPlainObject(params)) return {};
  const { inputResponses, requestState } = params;
  const retry: InputRetry = {};
  if (requestState !== undefined) {
    if (typeof requestState !== 'string') {
      return { invalid: 'params.requestState must be the string the server sent, unchanged' };
    }
    retry.requestState = requestState;
  }
  if (inputResponses !== undefined) {
    if (
      !isPlainObject(inputResponses) ||
      !Object.values(inputResponses).every(value => isPlainObject(value))
    ) {
      return {
        invalid: 'params.inputResponses must map each input request key to its result object',
      };
    }
    retry.inputResponses = inputResponses as Record<string, Record<string, unknown>>;
  }
  return retry;
}

/** The `subscriptions/listen` filter (`schema.ts` `SubscriptionFilter`). */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** Task ids whose `notifications/tasks` the stream asks for (tasks extension, contract §2.10). */
  taskIds?: string[];
}

const FILTER_KIND: ReadonlyArray<[keyof SubscriptionFilter, ListKind]> = [
  ['toolsListChanged', 'tools'],
  ['promptsListChanged', 'prompts'],
  ['resourcesListChanged', 'resources'],
];

/** Reads a listen request's `params.notifications`; a message (for -32602) when malformed. */
export function readSubscriptionFilter(params: unknown): SubscriptionFilter | { invalid: string } {
  const notifications = isPlainObject(params) ? params.notifications : undefined;
  if (!isPlainObject(notifications)) {
    return { invalid: 'params.notifications must be an object such as {"toolsListChanged": true}' };
  }
  const filter: SubscriptionFilter = {};
  for (const [member] of FILTER_KIND) {
    const value = notifications[member];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') {
      return { invalid: `params.notifications.${member} must be true or false` };
    }
    (filter as Record<string, unknown>)[member] = value;
  }
  const uris = notifications.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || !uris.every(uri => typeof uri === 'string')) {
      return { invalid: 'params.notifications.resourceSubscriptions must be an array of URIs' };
    }
    filter.resourceSubscriptions = uris;
  }
  const taskIds = notifications.taskIds;
  if (taskIds !== undefined) {
    if (!Array.isArray(taskIds) || !taskIds.every(taskId => typeof taskId === 'string')) {
      return { invalid: 'params.notifications.taskIds must be an array of task ids' };
    }
    filter.taskIds = taskIds;
  }
  return filter;
}

/**
 * The part of a filter the broker honours: the list_changed kinds it was asked for that it can
 * deliver (`available`). Resource update subscriptions are not relayed (no `resources/subscribe`
 * towards backends, spec §2), so they are never acknowledged.
 */
export function honouredFilter(
  requested: SubscriptionFilter,
  available: ReadonlySet<ListKind>,
): { filter: SubscriptionFilter; kinds: Set<ListKind> } {
  const filter: SubscriptionFilter = {};
  const kinds = new Set<ListKind>();
  for (const [member, kind] of FILTER_KIND) {
    if (requested[member] === true && available.has(kind)) {
      (filter as Record<string, unknown>)[member] = true;
      kinds.add(kind);
    }
  }
  return { filter, kinds };
}

function subscriptionMeta(subscriptionId: JsonRpcId): Record<string, unknown> {
  return { [ModernMetaKey.subscriptionId]: subscriptionId };
}

/** The first message of a listen stream: what is honoured, tagged with the subscription id. */
export function subscriptionAcknowledged(
  subscriptionId: JsonRpcId,
  honoured: SubscriptionFilter,
): JsonRpcNotification {
  return {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: subscriptionMeta(subscriptionId), notifications: honoured },
  };
}

/** A list_changed notification on a listen stream, tagged with the subscription id. */
export function subscriptionListChanged(
  subscriptionId: JsonRpcId,
  kind: Exclude<ListKind, 'roots'>,
): JsonRpcNotification {
  return {
    jsonrpc: '2.0',
    method: LIST_CHANGED_METHOD[kind],
    params: { _meta: subscriptionMeta(subscriptionId) },
  };
}

/** The result that ends a listen stream gracefully (the broker shutting down). */
export function subscriptionClosedResult(subscriptionId: JsonRpcId): Record<string, unknown> {
  return {
    resultType: 'complete',
    _meta: { ...serverInfoMeta(), ...subscriptionMeta(subscriptionId) },
  };
}

/** The 2025-11-25 "resource not found" error code, which 2026-07-28 retired (SEP-2164). */
export const LEGACY_RESOURCE_NOT_FOUND_CODE = -32002;

/**
 * A backend's JSON-RPC error as a 2026-07-28 client must see it. A 2025-11-25 backend answers an
 * unknown resource with -32002; that era MUST NOT see -32002 and expects -32602 with `data.uri`
 * (SEP-2164). Every other error passes unchanged.
 */
export function modernBackendError(
  method: string,
  params: Record<string, unknown>,
  error: JsonRpcErrorObject,
): JsonRpcErrorObject {
  if (method !== 'resources/read' || error.code !== LEGACY_RESOURCE_NOT_FOUND_CODE) return error;
  const data = isPlainObject(error.data) ? error.data : {};
  return {
    code: JsonRpcErrorCode.InvalidParams,
    message: error.message,
    data: { ...data, uri: typeof params.uri === 'string' ? params.uri : data.uri },
  };
}

/**
 * The HTTP status of a JSON-RPC error answered to a 2026-07-28 client as a plain JSON response
 * (transport spec: errors go in-band with 200, except those the revision maps to a status).
 * Only -32021 is the client's to fix here (its declared capabilities; `schema.ts`:
 * "For HTTP, the response status code MUST be 400"): a backend's -32020 / -32022 / -32601 judge
 * the request the broker built, whose metadata the broker validated on the way in. The broker's
 * own bound of open tasks per person (`data.reason: "task-limit"`, docs/contracts/tasks-and-apps.md
 * §2.6, E7) is 429, as for a 2025-11-25 client; its store out of reach (`"store-unavailable"`,
 * e.g. the task table when a call reserves its task) is 503, as everywhere.
 */
export function modernErrorHttpStatus(error: {
  readonly code?: unknown;
  readonly data?: unknown;
}): number {
  if (
    error.code === JsonRpcErrorCode.ServerError &&
    isPlainObject(error.data) &&
    error.data.reason === 'task-limit'
  ) {
    return 429;
  }
  if (
    error.code === JsonRpcErrorCode.InternalError &&
    isPlainObject(error.data) &&
    error.data.reason === STORE_UNAVAILABLE_REASON
  ) {
    return 503;
  }
  return error.code === JsonRpcErrorCode.MissingRequiredClientCapability ? 400 : 200;
}
