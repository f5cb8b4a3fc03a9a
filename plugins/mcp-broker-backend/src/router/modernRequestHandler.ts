/*
 * Serves one POSTed message of a 2026-07-28 (stateless) client: the era selection in
 * mcpEndpoint.ts sends every request with the modern `_meta` envelope (or a modern
 * `MCP-Protocol-Version` header) here; sessions are never looked at.
 *
 * Order (each step answers and stops on failure):
 *   1. notifications → 202, dropped (the revision defines none from clients over HTTP);
 *   2. request metadata (validateRequestMetadata): 400 -32602 / -32020 / -32022 with the
 *      specification's `data`;
 *   3. a method the broker does not serve in this era → 404 -32601;
 *   4. drain → 503 (Retry-After); permission decisions → 503 when the permission backend is
 *      unreachable; `mcp-broker.session.create` denied → 403 (spec §8: it guards every stateless
 *      request, the stateless counterpart of starting a session);
 *   5. the method table. Routing, permission filtering, forwarding, errors and audit are the
 *      session era's own (clientRequestDispatcher.ts: answerSharedRequest, routeToolCall); only
 *      the result shape differs: `resultType: "complete"`, serverInfo in `_meta`, and
 *      `ttlMs`/`cacheScope` on lists, `resources/read` and `server/discover`.
 * Errors a handler produces (unknown names, backend failures) go in-band (HTTP 200), as the
 * SDK does; a backend's -32021 (missing client capability) is HTTP 400 (modernErrorHttpStatus),
 * which is why a call's response stream opens only when something is streamed.
 *
 * `tools/call` first checks the `Mcp-Param-*` headers against the arguments (the tool's
 * `x-mcp-header` declarations, read with the catalog): 400 -32020 on a mismatch.
 *
 * `subscriptions/listen` is one line in MODERN_METHODS (served by listenEndpoint.ts).
 * input_required retries of tools/call are routed like any call; the tool-call handler resumes
 * the held call (StreamingToolCallHandler.handleModernToolCall; refusals answer 400 there).
 * prompts/get and resources/read of a 2026-07-28 backend take the same path (the backend may
 * answer them with input_required), their results shaped as here.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import type { BackendListTtls } from '../backend/BackendConnection';
import { canonicalJson } from '../inputRequests/RequestStateSealer';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import { relayedCapabilities } from '../protocol/capabilities';
import {
  jsonRpcError,
  jsonRpcResult,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../protocol/jsonRpc';
import { ModernHeader, withoutRequestEnvelope } from '../protocol/modernEra';
import { checkParamHeaders } from '../protocol/paramHeaders';
import {
  aggregatedTtlMs,
  cacheableResult,
  completeResult,
  discoverResult,
  modernBackendError,
  modernErrorHttpStatus,
  type CacheHints,
} from '../protocol/modernResults';
import {
  unknownModernMethodError,
  validateRequestMetadata,
  type ModernRequestContext,
  type ModernRequestError,
} from '../protocol/requestMetadata';
import { BROKER_INSTRUCTIONS } from '../protocol/versions';
import type { ModernCaller } from '../types';
import {
  answerSharedRequest,
  routeToModernBackend,
  routeToolCall,
  type SharedAnswer,
  type ToolCallCaller,
} from './clientRequestDispatcher';
import type { CredentialStep } from './credentialStep';
import { serveListen } from './listenEndpoint';
import { PrincipalAccessDeps, requestAccess, sendSessionCreateDenied } from './principalAccess';
import { headerValue, sendShuttingDown } from './protocol';
import { principalOf } from './requirePrincipal';

/** Dependencies of {@link serveModernMessage} (a subset of the endpoint's). */
export interface ModernRequestDeps extends PrincipalAccessDeps {
  toolCallAuditor: ToolCallAuditor;
  /** The credential step of a person's requests (spec §11). */
  credentialStep?: CredentialStep;
}

/** One validated, permitted 2026-07-28 request on its way to a method. */
export interface ModernRequest {
  deps: ModernRequestDeps;
  req: Request;
  res: Response;
  /** The request with the `_meta` envelope removed from its params (see withoutRequestEnvelope). */
  request: JsonRpcRequest;
  /** What the request's `_meta` said (version, capabilities, clientInfo). */
  context: ModernRequestContext;
  /** The authenticated principal. */
  principal: string;
  /** The catalog as the principal may see and use it. */
  catalog: PermittedCatalog;
}

/** Serves one method for a 2026-07-28 client and answers `res`. */
export type ModernMethodHandler = (request: ModernRequest) => Promise<void>;

/** `resources/read` results: contents may change at any moment and no update is relayed. */
const RESOURCE_READ_CACHE: CacheHints = { ttlMs: 0, cacheScope: 'private' };

/** The methods the broker serves to 2026-07-28 clients; anything else is 404 / -32601. */
export const MODERN_METHODS: Readonly<Record<string, ModernMethodHandler>> = Object.freeze({
  'server/discover': discover,
  'tools/list': list,
  'prompts/list': list,
  'resources/list': list,
  'resources/templates/list': list,
  'prompts/get': shared(result => completeResult(result), { inputCapable: true }),
  'resources/read': shared(result => cacheableResult(result, RESOURCE_READ_CACHE), {
    inputCapable: true,
  }),
  'completion/complete': shared(result => completeResult(result)),
  'tools/call': callTool,
  'subscriptions/listen': serveListen,
});

/** True when the broker serves `method` to 2026-07-28 clients. */
export function isServedModernMethod(method: string): boolean {
  return Object.hasOwn(MODERN_METHODS, method);
}

function sendModernError(res: Response, id: JsonRpcRequest['id'], error: ModernRequestError) {
  res.status(error.httpStatus).json(jsonRpcError(id, error.code, error.message, error.data));
}

/** Serves one POSTed 2026-07-28 request or notification (the era is already chosen). */
export async function serveModernMessage(
  deps: ModernRequestDeps,
  req: Request,
  res: Response,
  message:
    | { kind: 'request'; message: JsonRpcRequest }
    | { kind: 'notification'; message: JsonRpcNotification },
): Promise<void> {
  if (message.kind === 'notification') {
    res.status(202).end();
    return;
  }
  const request = message.message;
  const validated = validateRequestMetadata(request.method, request.params, {
    protocolVersion: headerValue(req, ModernHeader.protocolVersion),
    method: headerValue(req, ModernHeader.method),
    name: headerValue(req, ModernHeader.name),
  });
  if (!validated.ok) {
    sendModernError(res, request.id, validated.error);
    return;
  }
  const handler = isServedModernMethod(request.method) ? MODERN_METHODS[request.method] : undefined;
  if (handler === undefined) {
    sendModernError(res, request.id, unknownModernMethodError(request.method.slice(0, 100)));
    return;
  }
  if (deps.broker.draining) {
    sendShuttingDown(res, request.id);
    return;
  }
  const access = await requestAccess(deps, req, res, request.id);
  if (!access) return;
  if (!access.mayCreateSession) {
    sendSessionCreateDenied(res, 'using the MCP broker', request.id);
    return;
  }
  // Checked again after the permission decision (as for sessions): from here to the call's
  // registration nothing waits, so a drain that began meanwhile refuses it or sees its call.
  if (deps.broker.draining) {
    sendShuttingDown(res, request.id);
    return;
  }
  await handler({
    deps,
    req,
    res,
    request: { ...request, params: withoutRequestEnvelope(request.params) },
    context: validated.context,
    principal: principalOf(res),
    catalog: access.catalog,
  });
}

/**
 * The `Mcp-Param-*` check of a call (the specification's server rule, done by the broker because
 * it reads the body): against the declarations the catalog read from the tool's `inputSchema`.
 * Only for a tool the principal may use: any other is answered as unknown by routeToolCall,
 * whatever its headers say.
 */
function paramHeaderMismatch({ req, request, catalog }: ModernRequest) {
  const name = request.params?.name;
  const declarations = typeof name === 'string' ? catalog.routeTool(name)?.paramHeaders : undefined;
  if (declarations === undefined) return undefined;
  return checkParamHeaders(declarations, request.params?.arguments, header =>
    headerValue(req, header),
  );
}

/** The `ttlMs` of lists and `server/discover`. */
function listCacheHints(
  deps: ModernRequestDeps,
  scope: CacheHints['cacheScope'],
  kinds: ReadonlyArray<keyof BackendListTtls>,
): CacheHints {
  // The smallest non-zero hint of the 2026-07-28 backends' lists of these kinds; 2025-11-25
  // backends state none, so without a modern backend the configured default applies.
  return {
    ttlMs: aggregatedTtlMs(deps.broker.listTtlHints(kinds), deps.broker.config.listTtlMs),
    cacheScope: scope,
  };
}

/** The backend lists whose hints bear on each list method's `ttlMs`. */
const LIST_TTL_KINDS: Readonly<Record<string, ReadonlyArray<keyof BackendListTtls>>> = {
  'tools/list': ['tools'],
  'prompts/list': ['prompts'],
  'resources/list': ['resources'],
  'resources/templates/list': ['resourceTemplates'],
};

/** `server/discover` describes every list: all of their hints bear on its `ttlMs`. */
const ALL_LIST_KINDS: ReadonlyArray<keyof BackendListTtls> = [
  'tools',
  'prompts',
  'resources',
  'resourceTemplates',
];

async function discover({ deps, request, res }: ModernRequest): Promise<void> {
  res.json(
    jsonRpcResult(
      request.id,
      discoverResult({
        capabilities: deps.broker.serverCapabilities(),
        instructions: BROKER_INSTRUCTIONS,
        // The same for every permitted caller: nothing in it depends on who asks.
        ...listCacheHints(deps, 'public', ALL_LIST_KINDS),
      }),
    ),
  );
}

/** The four lists: filtered per principal, so `private`. */
async function list(modern: ModernRequest): Promise<void> {
  const { deps, request, res, catalog } = modern;
  const answer = await answerSharedRequest(
    deps.broker,
    catalog,
    request.method,
    request.params ?? {},
  );
  sendShared(res, request, answer, result =>
    cacheableResult(result, listCacheHints(deps, 'private', LIST_TTL_KINDS[request.method] ?? [])),
  );
}

/**
 * A method served through the session era's routing, with the result shaped by `shape`.
 * `inputCapable`: a 2026-07-28 backend's answer may be `input_required`, so a request for one
 * goes through the ToolCallHandler as tool calls do (routeToModernBackend).
 */
function shared(
  shape: (result: Record<string, unknown>) => Record<string, unknown>,
  options: { inputCapable?: boolean } = {},
): ModernMethodHandler {
  return async modern => {
    const { deps, request, res, catalog } = modern;
    if (
      options.inputCapable &&
      (await routeToModernBackend(
        { ...modern, broker: deps.broker, credentialStep: deps.credentialStep },
        () => modernCaller(modern, shape),
        { retries: true },
      ))
    ) {
      return;
    }
    const answer = await answerSharedRequest(
      deps.broker,
      catalog,
      request.method,
      request.params ?? {},
    );
    sendShared(res, request, answer, shape);
  };
}

function sendShared(
  res: Response,
  request: JsonRpcRequest,
  answer: SharedAnswer | undefined,
  shape: (result: Record<string, unknown>) => Record<string, unknown>,
): void {
  if (res.headersSent) return;
  if (answer === undefined) {
    // Unreachable: every method of MODERN_METHODS that calls this is a shared one.
    sendModernError(res, request.id, unknownModernMethodError(request.method));
    return;
  }
  if ('error' in answer) {
    const error = modernBackendError(request.method, request.params ?? {}, answer.error);
    res.status(modernErrorHttpStatus(error)).json({ jsonrpc: '2.0', id: request.id, error });
    return;
  }
  res.json(jsonRpcResult(request.id, shape(answer.result)));
}

/**
 * The stateless caller of a tool call. Its pool key binds the principal and the capabilities the
 * broker relays (canonical JSON, so key order does not matter): calls that may share a backend
 * session are exactly those the backend may treat alike.
 */
export function modernCallerOf(principal: string, context: ModernRequestContext): ModernCaller {
  const relayed = relayedCapabilities(context.clientCapabilities);
  const poolKey = `stateless:${createHash('sha256')
    .update(`${principal}\u0000${canonicalJson(relayed)}`)
    .digest('base64url')}`;
  return {
    era: 'modern',
    principal,
    protocolVersion: context.protocolVersion,
    clientCapabilities: context.clientCapabilities,
    ...(context.clientInfo === undefined ? {} : { clientInfo: context.clientInfo }),
    ...(context.logLevel === undefined ? {} : { logLevel: context.logLevel }),
    poolKey,
  };
}

async function callTool(modern: ModernRequest): Promise<void> {
  const { deps, request, res, catalog } = modern;
  const mismatch = paramHeaderMismatch(modern);
  if (mismatch !== undefined) {
    sendModernError(res, request.id, mismatch);
    return;
  }
  // A retry (params.requestState / inputResponses) is routed like any call; the handler
  // resumes its held call (StreamingToolCallHandler.handleModernToolCall).
  await routeToolCall(
    {
      broker: deps.broker,
      request,
      req: modern.req,
      res,
      catalog,
      toolCallAuditor: deps.toolCallAuditor,
      credentialStep: deps.credentialStep,
    },
    modernCaller(modern),
  );
}

/** A 2026-07-28 client as the caller of a request the ToolCallHandler serves. */
function modernCaller(
  { principal, context }: ModernRequest,
  shapeResult?: (result: Record<string, unknown>) => Record<string, unknown>,
): ToolCallCaller {
  const caller = modernCallerOf(principal, context);
  return {
    principal,
    step: { principal, era: 'modern', clientCapabilities: context.clientCapabilities },
    // The client cancels by closing the response stream: the call's end signal covers it.
    endSignals: [],
    // No session: the stream carries no Mcp-Session-Id (the revision mints and echoes none).
    streamHeaders: {},
    handle: (handler, call) =>
      handler.handleModernToolCall({
        ...call,
        caller,
        ...(shapeResult === undefined ? {} : { shapeResult }),
      }),
  };
}
