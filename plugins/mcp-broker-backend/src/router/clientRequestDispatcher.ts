/*
 * Answers a client's JSON-RPC requests within a session. List requests come from the
 * aggregated catalog (no backend round trip); prompts/get, resources/read and
 * completion/complete go to the owning backend over the broker's own session; tools/call goes to
 * the ToolCallHandler, and so do prompts/get and resources/read of a 2026-07-28 backend (it may
 * answer them with `input_required`, which needs the tool calls' rounds: routeToModernBackend).
 * Unknown names are JSON-RPC -32602 and unsupported methods -32601: never an exception.
 *
 * The routing (prefixed name → backend and own name, permissions, forwarding, errors, audit) is
 * shared with the stateless era: `answerSharedRequest` and `routeToolCall` are what
 * modernRequestHandler.ts uses too; only the shaping of the answer differs per era.
 */
import type { Request, Response } from 'express';
import type { McpBroker } from '../broker/McpBroker';
import {
  isPlainObject,
  JsonRpcErrorCode,
  JsonRpcErrorObject,
  JsonRpcRequest,
  JsonRpcResponse,
  jsonRpcError,
  jsonRpcResult,
} from '../protocol/jsonRpc';
import type { ToolCallAuditor, ToolCallAuditRecord } from '../audit/ToolCallAuditor';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import type { ClientSession } from '../sessions/ClientSessionRegistry';
import type {
  BrokerBackend,
  ClientEventStream,
  ClientReply,
  ToolCallContext,
  ToolCallHandler,
} from '../types';
import { callEndSignal } from './callEndSignal';
import { clientReplyOf } from './clientReply';
import { openBrokerEventStream } from './SseClientStream';
import { toClientError } from '../backend/backendErrors';
import { authOf } from '../identity/BackendCredentialProvider';
import { CredentialStep, type StepCaller } from './credentialStep';

/** Methods the broker deliberately does not support (it does not relay subscriptions or logs). */
const UNSUPPORTED_METHODS = new Set([
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);

/** Everything one request needs. */
export interface DispatchContext {
  broker: McpBroker;
  session: ClientSession;
  request: JsonRpcRequest;
  req: Request;
  res: Response;
  /** The catalog as the session's principal may see and use it (denied items are unknown). */
  catalog: PermittedCatalog;
  toolCallAuditor: ToolCallAuditor;
  /** The credential step (spec §11); absent in tests that build a dispatcher without it. */
  credentialStep?: CredentialStep;
}

/**
 * A tool call's response stream sends its headers with its first event (usually the result, so
 * a quick call leaves in one packet), or after this long when the tool is slow and silent.
 */
const TOOL_CALL_HEADER_DEADLINE_MS = 1_000;

/** Dispatches one client request and answers `res`. */
export async function dispatchClientRequest(context: DispatchContext): Promise<void> {
  const { broker, request, res } = context;
  if (request.method === 'tools/call') {
    await callTool(context);
    return;
  }
  if (await routeToModernBackend(context, () => sessionCaller(context.session))) return;
  const response = await answer(broker, context.catalog, request);
  if (!res.headersSent) res.json(response);
}

async function answer(
  broker: McpBroker,
  catalog: PermittedCatalog,
  request: JsonRpcRequest,
): Promise<JsonRpcResponse> {
  const { id, method } = request;
  switch (method) {
    case 'ping':
      return jsonRpcResult(id, {});
    case 'initialize':
      return jsonRpcError(
        id,
        JsonRpcErrorCode.InvalidRequest,
        'this session is initialized already; start a new session without Mcp-Session-Id',
      );
    default: {
      const shared = await answerSharedRequest(broker, catalog, method, request.params ?? {});
      if (shared !== undefined) {
        return 'error' in shared
          ? { jsonrpc: '2.0', id, error: shared.error }
          : jsonRpcResult(id, shared.result);
      }
      if (UNSUPPORTED_METHODS.has(method)) {
        return jsonRpcError(
          id,
          JsonRpcErrorCode.MethodNotFound,
          `${method} is not supported by the MCP broker`,
        );
      }
      return jsonRpcError(
        id,
        JsonRpcErrorCode.MethodNotFound,
        `method "${method.slice(0, 100)}" not found`,
      );
    }
  }
}

/** A request's answer before it is shaped for its era: a result body or a JSON-RPC error. */
export type SharedAnswer = { result: Record<string, unknown> } | { error: JsonRpcErrorObject };

function invalidParams(message: string): SharedAnswer {
  return { error: { code: JsonRpcErrorCode.InvalidParams, message } };
}

/**
 * Answers the methods both eras serve alike: the four lists from the permitted catalog, and
 * prompts/get, resources/read and completion/complete routed to the owning backend over the
 * broker's own session. Undefined for any other method (the caller's era decides about those).
 */
export async function answerSharedRequest(
  broker: McpBroker,
  catalog: PermittedCatalog,
  method: string,
  params: Record<string, unknown>,
): Promise<SharedAnswer | undefined> {
  switch (method) {
    case 'tools/list':
      return { result: { tools: catalog.tools } };
    case 'prompts/list':
      return { result: { prompts: catalog.prompts } };
    case 'resources/list':
      return { result: { resources: catalog.resources } };
    case 'resources/templates/list':
      return { result: { resourceTemplates: catalog.resourceTemplates } };
    case 'prompts/get': {
      if (typeof params.name !== 'string') {
        return invalidParams('prompts/get needs params.name (a string)');
      }
      const route = catalog.routePrompt(params.name);
      if (!route) return invalidParams(`unknown prompt "${params.name}"`);
      return forward(broker, route.backend, 'prompts/get', {
        ...params,
        name: route.originalName,
      });
    }
    case 'resources/read': {
      if (typeof params.uri !== 'string') {
        return invalidParams('resources/read needs params.uri (a string)');
      }
      const backend = catalog.routeResource(params.uri);
      if (backend === undefined) return invalidParams(`unknown resource "${params.uri}"`);
      return forward(broker, backend, 'resources/read', params);
    }
    case 'completion/complete':
      return complete(broker, catalog, params);
    default:
      return undefined;
  }
}

/**
 * completion/complete goes to the backend that owns the referenced prompt (by its prefixed
 * name, passed on unprefixed) or resource template (by URI, as resources/read routes it).
 */
async function complete(
  broker: McpBroker,
  catalog: PermittedCatalog,
  params: Record<string, unknown>,
): Promise<SharedAnswer> {
  const ref = params.ref as Record<string, unknown> | undefined;
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
    const route = catalog.routePrompt(ref.name);
    if (!route) return invalidParams(`unknown prompt "${ref.name.slice(0, 200)}"`);
    return forward(broker, route.backend, 'completion/complete', {
      ...params,
      ref: { ...ref, name: route.originalName },
    });
  }
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
    const backend = catalog.routeResource(ref.uri);
    if (backend === undefined) return invalidParams(`unknown resource "${ref.uri.slice(0, 200)}"`);
    return forward(broker, backend, 'completion/complete', params);
  }
  return invalidParams(
    'completion/complete needs params.ref: {type: "ref/prompt", name} or {type: "ref/resource", uri}',
  );
}

async function forward(
  broker: McpBroker,
  backend: string,
  method: string,
  params: Record<string, unknown>,
): Promise<SharedAnswer> {
  const connection = broker.connection(backend);
  if (!connection) {
    return {
      error: {
        code: JsonRpcErrorCode.InternalError,
        message: `backend ${backend} is not configured`,
      },
    };
  }
  try {
    return { result: await connection.request(method, params, { signal: broker.shutdownSignal }) };
  } catch (error) {
    return { error: toClientError(error) };
  }
}

async function callTool(context: DispatchContext): Promise<void> {
  await routeToolCall(context, sessionCaller(context.session));
}

/** A session's client as the caller of a request the ToolCallHandler serves. */
function sessionCaller(session: ClientSession): ToolCallCaller {
  return {
    principal: session.principal,
    step: {
      principal: session.principal,
      era: 'legacy',
      clientSessionId: session.id,
      clientCapabilities: session.clientCapabilities,
    },
    endSignals: [session.ended.signal],
    streamHeaders: { 'Mcp-Session-Id': session.id },
    handle: (handler, call) => handler.handleToolCall({ ...call, clientSession: session }),
  };
}

/** The era-specific part of a tool call: who calls, and which handler entry takes it. */
export interface ToolCallCaller {
  principal: string;
  /** Who calls, as the credential step needs to know. */
  step: StepCaller;
  /** Sources that end the call besides the client's connection and shutdown (session end). */
  endSignals: AbortSignal[];
  /** Headers of the call's SSE response (the session id, for sessions). */
  streamHeaders: Record<string, string>;
  /** Hands the routed call to the handler's entry for this era. */
  handle(handler: ToolCallHandler, call: Omit<ToolCallContext, 'clientSession'>): Promise<void>;
}

/**
 * A `tools/call` of either era: resolves the prefixed name within the permitted catalog (a
 * denied tool answers exactly like an unknown one, -32602), audits it, and hands it to the
 * ToolCallHandler with a stream that ends when the client's connection closes, an end signal of
 * the caller fires, or the broker stops.
 */
export async function routeToolCall(
  context: Pick<
    DispatchContext,
    'broker' | 'request' | 'req' | 'res' | 'catalog' | 'toolCallAuditor' | 'credentialStep'
  >,
  caller: ToolCallCaller,
): Promise<void> {
  const { broker, request, res, catalog, toolCallAuditor } = context;
  const params = request.params ?? {};
  if (typeof params.name !== 'string') {
    res.json(
      jsonRpcError(
        request.id,
        JsonRpcErrorCode.InvalidParams,
        'tools/call needs params.name (a string)',
      ),
    );
    return;
  }
  const route = catalog.routeTool(params.name);
  const backend = route ? broker.server(route.backend) : undefined;
  if (!route || !backend) {
    // Denied and unknown answer alike; only the audit trail tells them apart.
    const hidden = broker.catalog().routeTool(params.name);
    const tool = hidden?.originalName ?? params.name;
    await toolCallAuditor.refused(
      { principal: caller.principal, server: hidden?.backend, tool },
      hidden ? 'denied' : 'failed',
      hidden ? 'mcp-broker.tool.use denied' : 'unknown tool',
    );
    res.json(
      jsonRpcError(
        request.id,
        JsonRpcErrorCode.InvalidParams,
        `unknown tool "${params.name.slice(0, 200)}"`,
      ),
    );
    return;
  }
  const audit = await toolCallAuditor.begin(
    {
      principal: caller.principal,
      server: backend.name,
      tool: route.originalName,
      credentialMode: authOf(backend).mode,
    },
    request.id,
  );
  try {
    await handOff(
      context,
      caller,
      backend,
      { ...request, params: { ...params, name: route.originalName } },
      audit,
    );
  } finally {
    await audit.finish();
  }
}

/**
 * `prompts/get` or `resources/read` whose prompt or resource belongs to a 2026-07-28 backend:
 * handed to the ToolCallHandler like a tool call, because such a backend may answer it with
 * `input_required` (relayed to a modern client, asked on the response stream of a session's
 * request; see StreamingToolCallHandler). False, with nothing answered, for anything else
 * (a 2025 backend, a name that does not resolve, invalid params): answerSharedRequest answers
 * those over the broker's own connection, as before. With `retries` (a 2026-07-28 caller) a
 * request carrying `requestState` is handed over whatever the backend's era: its state is
 * opened (and refused with 400 when it is not one of ours for this request) rather than passed
 * to a 2025 backend. `callerOf` is called only for a request handed over (a stateless caller
 * hashes its pool key; every other request of either era passes through here too).
 */
export async function routeToModernBackend(
  context: Pick<
    DispatchContext,
    'broker' | 'request' | 'req' | 'res' | 'catalog' | 'credentialStep'
  >,
  callerOf: () => ToolCallCaller,
  options: { retries?: boolean } = {},
): Promise<boolean> {
  const { broker, request, catalog } = context;
  const params = request.params ?? {};
  let backendName: string | undefined;
  let routed = request;
  if (request.method === 'prompts/get' && typeof params.name === 'string') {
    const route = catalog.routePrompt(params.name);
    backendName = route?.backend;
    if (route) routed = { ...request, params: { ...params, name: route.originalName } };
  } else if (request.method === 'resources/read' && typeof params.uri === 'string') {
    backendName = catalog.routeResource(params.uri);
  } else if (request.method === 'completion/complete' && isPlainObject(params.ref)) {
    // Only a server that acts with each person's identity takes completions per person.
    const ref = params.ref;
    if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
      const route = catalog.routePrompt(ref.name);
      backendName = route?.backend;
      if (route)
        routed = { ...request, params: { ...params, ref: { ...ref, name: route.originalName } } };
    } else if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
      backendName = catalog.routeResource(ref.uri);
    }
  }
  const backend = backendName === undefined ? undefined : broker.server(backendName);
  if (backend === undefined) return false;
  // A person's credential (spec §11) is presented on the person's own path, whatever the era.
  const personal = context.credentialStep !== undefined && CredentialStep.isPersonal(backend);
  if (request.method === 'completion/complete' && !personal) return false;
  const retry = options.retries === true && params.requestState !== undefined;
  if (!retry && !personal && broker.connection(backend.name)?.era !== 'modern') return false;
  await handOff(context, callerOf(), backend, routed);
  return true;
}

/**
 * Hands a routed request to the caller's handler entry with a stream that ends when the
 * client's connection closes, an end signal of the caller fires, or the broker stops.
 */
async function handOff(
  context: Pick<DispatchContext, 'broker' | 'req' | 'res' | 'credentialStep'>,
  caller: ToolCallCaller,
  backend: BrokerBackend,
  request: JsonRpcRequest,
  audit?: ToolCallAuditRecord,
): Promise<void> {
  const { broker, res } = context;
  const ended = callEndSignal(res, [...caller.endSignals, broker.shutdownSignal]);
  const observe = (stream: ClientEventStream) => audit?.observe(stream) ?? stream;
  const reply = clientReplyOf(res);
  try {
    // The person's credential for this backend (spec §11), or the step answers the client.
    const prepared = context.credentialStep
      ? await context.credentialStep.prepare(
          context.req,
          caller.step,
          backend,
          request,
          audit?.observeReply(reply) ?? reply,
          ended.signal,
        )
      : {
          backend,
          request,
          guardReply: (r: ClientReply) => r,
          guardStream: (s: ClientEventStream) => s,
        };
    if (prepared === undefined) return;
    const guarded = prepared.guardReply(reply);
    await caller.handle(broker.toolCalls, {
      backend: prepared.backend,
      request: prepared.request,
      reply: audit?.observeReply(guarded) ?? guarded,
      openEventStream: () =>
        observe(
          prepared.guardStream(
            openBrokerEventStream(broker, res, caller.streamHeaders, {
              deferHeadersMs: TOOL_CALL_HEADER_DEADLINE_MS,
            }),
          ),
        ),
      signal: ended.signal,
    });
  } finally {
    ended.release();
  }
}
