/*
 * The methods answered from the catalog or over the broker's own connection to a backend, for
 * both eras: the four lists (from the principal's permitted catalog, no backend round trip),
 * `server/discover`, `ping`, and `prompts/get`, `resources/read` and `completion/complete` routed
 * to the backend that owns the item (unknown or denied names are -32602; backend failures one
 * JSON-RPC error, backendErrors.ts). Only the answer's shape differs per era
 * ({@link sendAnswer}): a 2026-07-28 result is `complete`, lists carry `ttlMs` and
 * `cacheScope`, and an error is worded as that era expects. A prompt or resource of a
 * 2026-07-28 backend (which may answer `input_required`) goes through the tool-call machinery
 * instead (callMethods.ts).
 */
import type { BackendListTtls } from '../backend/backendConnectionTypes';
import { toClientError } from '../backend/backendErrors';
import type { McpBroker } from '../broker/McpBroker';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import { JsonRpcErrorCode, jsonRpcResult, type JsonRpcErrorObject } from '../protocol/jsonRpc';
import {
  aggregatedTtlMs,
  cacheableResult,
  completeResult,
  discoverResult,
  modernBackendError,
  modernErrorHttpStatus,
  serverInfoMeta,
  type CacheHints,
} from '../protocol/modernResults';
import { resultWithBrokerUiUris } from '../protocol/uiResourceUris';
import { BROKER_INSTRUCTIONS } from '../protocol/versions';
import {
  ambiguityOf,
  ambiguousAppResource,
  resolveAppResource,
  routeOf,
  withoutAppOriginHint,
} from './appCallRoutes';
import { declaresUi } from './declaresUi';
import { withLegacyTaskSupport } from './legacyTaskSupport';
import { type McpRequest, type McpRoute, permittedCatalogOf } from './mcpRequest';

/** A request's answer before it is shaped for its era: a result body or a JSON-RPC error. */
export type SharedAnswer = { result: Record<string, unknown> } | { error: JsonRpcErrorObject };

/** How a 2026-07-28 result is shaped (the session era's goes as it is). */
export type ModernShape = (result: Record<string, unknown>) => Record<string, unknown>;

/** The list kinds (as BackendConnection keeps them) whose `ttlMs` hints a list aggregates. */
type ListKey = keyof BackendListTtls;

/** `resources/read` results: contents may change at any moment and no update is relayed. */
const RESOURCE_READ_CACHE: CacheHints = { ttlMs: 0, cacheScope: 'private' };

/** Every list kind: `server/discover` describes them all. */
const ALL_LIST_KEYS: readonly ListKey[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/**
 * Answers `request` with `answer`, shaped for its era: the session era's result as it is; a
 * 2026-07-28 result through `shapeModern` (default `complete`), its error as that era words it,
 * with the HTTP status that era gives it.
 */
export function sendAnswer(
  request: McpRequest,
  answer: SharedAnswer,
  shapeModern: ModernShape = completeResult,
): void {
  const id = request.id!;
  if (request.era === 'legacy') {
    request.writer.answer(
      'error' in answer
        ? { jsonrpc: '2.0', id, error: answer.error }
        : jsonRpcResult(id, answer.result),
    );
    return;
  }
  if ('error' in answer) {
    const error = modernBackendError(request.method!, request.params, answer.error);
    request.writer.answer({ jsonrpc: '2.0', id, error }, modernErrorHttpStatus(error));
    return;
  }
  request.writer.answer(jsonRpcResult(id, shapeModern(answer.result)));
}

/** `ping`: the broker is alive. */
export async function ping(request: McpRequest): Promise<void> {
  sendAnswer(request, { result: {} });
}

/** `server/discover` (2026-07-28): versions, capabilities, who the broker is. */
export function discover(broker: McpBroker) {
  return async (request: McpRequest): Promise<void> => {
    const { endpoint } = request;
    const result = discoverResult({
      capabilities: broker.serverCapabilities(endpoint?.servers),
      tasks: broker.offersModernTasks(endpoint?.servers),
      instructions: endpoint === undefined ? BROKER_INSTRUCTIONS : endpoint.instructions,
      // The same for every permitted caller: nothing in it depends on who asks.
      ...listCacheHints(broker, 'public', ALL_LIST_KEYS),
    });
    // Through a curated endpoint it names itself as the endpoint (spec §13).
    if (endpoint !== undefined) {
      result._meta = { ...(result._meta as object), ...serverInfoMeta(endpoint.serverInfo) };
    }
    request.writer.answer(jsonRpcResult(request.id!, result));
  };
}

/**
 * One of the four lists, from the permitted catalog (filtered per principal, so `private` for
 * 2026-07-28 clients, with the `ttlMs` of the backends' lists of that kind).
 */
export function list(broker: McpBroker, key: ListKey) {
  return async (request: McpRequest): Promise<void> => {
    const catalog = permittedCatalogOf(request);
    let items = key === 'tools' ? catalog.visibleTools(declaresUi(request)) : catalog[key];
    // A 2025-11-25 client is shown which tools may run as tasks (contract tasks-and-apps §2.2).
    if (key === 'tools' && request.era === 'legacy') {
      items = withLegacyTaskSupport(broker, catalog, items);
    }
    sendAnswer(request, { result: { [key]: items } }, result =>
      cacheableResult(result, listCacheHints(broker, 'private', [key])),
    );
  };
}

/** `prompts/get` over the owning backend's connection (the route's own prompt name). */
export function getPrompt(broker: McpBroker) {
  return async (request: McpRequest): Promise<void> => {
    const { params, route } = request;
    if (route === undefined) {
      sendAnswer(request, invalidParams(`unknown prompt "${String(params.name)}"`));
      return;
    }
    const answer = await forward(broker, route, 'prompts/get', { ...params, name: route.name });
    sendAnswer(request, withBrokerUiUris(route.backend, answer));
  };
}

/**
 * `resources/read` over the owning backend's connection: the backend gets its own URI (a broker
 * UI URI's original), the client gets UI URIs in the broker's form.
 */
export function readResource(broker: McpBroker) {
  return async (request: McpRequest): Promise<void> => {
    const { params, route } = request;
    if (route === undefined) {
      sendAnswer(request, unknownResource(request, String(params.uri)));
      return;
    }
    const answer = await forward(broker, route, 'resources/read', {
      ...withoutAppOriginHint(params, name => broker.server(name) !== undefined),
      uri: route.name,
    });
    sendAnswer(request, withBrokerUiUris(route.backend, answer), result =>
      cacheableResult(result, RESOURCE_READ_CACHE),
    );
  };
}

/**
 * `completion/complete` to the backend that owns the referenced prompt (by its prefixed name,
 * passed on unprefixed) or resource template (by URI, as resources/read routes it).
 */
export function complete(broker: McpBroker) {
  return async (request: McpRequest): Promise<void> => {
    const { params, route } = request;
    // The table's params rule holds: a prompt reference by name or a resource one by URI.
    const ref = params.ref as { type: string; name?: string; uri?: string };
    const prompt = ref.type === 'ref/prompt';
    if (route === undefined) {
      sendAnswer(
        request,
        prompt
          ? invalidParams(`unknown prompt "${String(ref.name).slice(0, 200)}"`)
          : unknownResource(request, String(ref.uri)),
      );
      return;
    }
    const answer = await forward(broker, route, 'completion/complete', {
      ...params,
      ref: prompt ? { ...ref, name: route.name } : { ...ref, uri: route.name },
    });
    sendAnswer(request, answer);
  };
}

/** Where `prompts/get` points: the prompt's backend and own name. */
export function promptRoute(
  catalog: PermittedCatalog,
  params: Record<string, unknown>,
): McpRoute | undefined {
  if (typeof params.name !== 'string') return undefined;
  const route = catalog.routePrompt(params.name);
  return route && { backend: route.backend, name: route.originalName };
}

/**
 * Where `resources/read` points: the resource's backend, and the URI the backend knows it by
 * (only a broker UI URI differs from the client's).
 */
export function resourceRoute(
  catalog: PermittedCatalog,
  params: Record<string, unknown>,
): McpRoute | undefined {
  if (typeof params.uri !== 'string') return undefined;
  const route = catalog.resolveResource(params.uri);
  return route && { backend: route.backend, name: route.uri };
}

/**
 * Where a resource URI of a request points (`resources/read`, a completion's `ref/resource`): the
 * catalog's route; else, for a client that declared the UI extension (only hosts proxy an app's
 * requests), an app's own unqualified `ui://` URI resolved to its one server (contract §3.6).
 */
export function resourceOrAppRoute(
  catalog: PermittedCatalog,
  uri: unknown,
  params: Record<string, unknown>,
  request: McpRequest,
): McpRoute | undefined {
  return (
    resourceRoute(catalog, { uri }) ??
    (typeof uri === 'string' && declaresUi(request)
      ? routeOf(resolveAppResource(catalog, uri, params))
      : undefined)
  );
}

/**
 * Where `completion/complete` points: the referenced prompt's backend, or the resource (template)
 * URI's, resolved as `resources/read` resolves it (an app's unqualified UI URI included).
 */
export function completionRoute(
  catalog: PermittedCatalog,
  params: Record<string, unknown>,
  request: McpRequest,
): McpRoute | undefined {
  const ref = params.ref as Record<string, unknown> | undefined;
  if (ref?.type === 'ref/prompt') return promptRoute(catalog, { name: ref.name });
  if (ref?.type === 'ref/resource') return resourceOrAppRoute(catalog, ref.uri, params, request);
  return undefined;
}

/**
 * The answer for a resource URI that routes nowhere: the ambiguity error when it is an app's own
 * UI URI that several servers serve (contract §3.6), otherwise unknown (the URI cut at 200
 * characters in the message).
 */
function unknownResource(request: McpRequest, uri: string): SharedAnswer {
  const ambiguity = declaresUi(request)
    ? ambiguityOf(resolveAppResource(permittedCatalogOf(request), uri, request.params))
    : undefined;
  return ambiguity === undefined
    ? invalidParams(`unknown resource "${uri.slice(0, 200)}"`)
    : { error: ambiguousAppResource(uri, ambiguity) };
}

/** A backend's answer with its UI URIs in the broker's form (errors as they are). */
function withBrokerUiUris(backend: string, answer: SharedAnswer): SharedAnswer {
  return 'result' in answer ? { result: resultWithBrokerUiUris(backend, answer.result) } : answer;
}

function invalidParams(message: string): SharedAnswer {
  return { error: { code: JsonRpcErrorCode.InvalidParams, message } };
}

async function forward(
  broker: McpBroker,
  route: McpRoute,
  method: string,
  params: Record<string, unknown>,
): Promise<SharedAnswer> {
  const connection = broker.connection(route.backend);
  if (!connection) {
    return {
      error: {
        code: JsonRpcErrorCode.InternalError,
        message: `backend ${route.backend} is not configured`,
      },
    };
  }
  try {
    return { result: await connection.request(method, params, { signal: broker.shutdownSignal }) };
  } catch (error) {
    return { error: toClientError(error) };
  }
}

/** The `ttlMs` of lists and `server/discover`. */
function listCacheHints(
  broker: McpBroker,
  scope: CacheHints['cacheScope'],
  kinds: readonly ListKey[],
): CacheHints {
  // The smallest non-zero hint of the 2026-07-28 backends' lists of these kinds; 2025-11-25
  // backends state none, so without a modern backend the configured default applies.
  return {
    ttlMs: aggregatedTtlMs(broker.listTtlHints(kinds), broker.config.listTtlMs),
    cacheScope: scope,
  };
}
