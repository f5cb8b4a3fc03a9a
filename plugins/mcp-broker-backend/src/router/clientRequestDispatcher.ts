/*
 * Answers a client's JSON-RPC requests within a session. List requests come from the
 * aggregated catalog (no backend round trip); prompts/get, resources/read and
 * completion/complete go to the owning backend over the broker's own session; tools/call goes to the ToolCallHandler. Unknown names
 * are JSON-RPC -32602 and unsupported methods -32601: never an exception.
 */
import type { Request, Response } from 'express';
import type { McpBroker } from '../broker/McpBroker';
import {
  JsonRpcErrorCode,
  JsonRpcRequest,
  JsonRpcResponse,
  jsonRpcError,
  jsonRpcResult,
} from '../protocol/jsonRpc';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import type { ClientSession } from '../sessions/ClientSessionRegistry';
import { callEndSignal } from './callEndSignal';
import { clientReplyOf } from './clientReply';
import { openBrokerEventStream } from './SseClientStream';
import { toClientError } from '../backend/backendErrors';

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
  const response = await answer(broker, context.catalog, request);
  if (!res.headersSent) res.json(response);
}

async function answer(
  broker: McpBroker,
  catalog: PermittedCatalog,
  request: JsonRpcRequest,
): Promise<JsonRpcResponse> {
  const { id, method } = request;
  const params = request.params ?? {};
  switch (method) {
    case 'ping':
      return jsonRpcResult(id, {});
    case 'tools/list':
      return jsonRpcResult(id, { tools: catalog.tools });
    case 'prompts/list':
      return jsonRpcResult(id, { prompts: catalog.prompts });
    case 'resources/list':
      return jsonRpcResult(id, { resources: catalog.resources });
    case 'resources/templates/list':
      return jsonRpcResult(id, { resourceTemplates: catalog.resourceTemplates });
    case 'prompts/get': {
      if (typeof params.name !== 'string') {
        return jsonRpcError(
          id,
          JsonRpcErrorCode.InvalidParams,
          'prompts/get needs params.name (a string)',
        );
      }
      const route = catalog.routePrompt(params.name);
      if (!route)
        return jsonRpcError(id, JsonRpcErrorCode.InvalidParams, `unknown prompt "${params.name}"`);
      return forward(broker, id, route.backend, 'prompts/get', {
        ...params,
        name: route.originalName,
      });
    }
    case 'resources/read': {
      if (typeof params.uri !== 'string') {
        return jsonRpcError(
          id,
          JsonRpcErrorCode.InvalidParams,
          'resources/read needs params.uri (a string)',
        );
      }
      const backend = catalog.routeResource(params.uri);
      if (backend === undefined) {
        return jsonRpcError(id, JsonRpcErrorCode.InvalidParams, `unknown resource "${params.uri}"`);
      }
      return forward(broker, id, backend, 'resources/read', params);
    }
    case 'completion/complete':
      return complete(broker, catalog, id, params);
    case 'initialize':
      return jsonRpcError(
        id,
        JsonRpcErrorCode.InvalidRequest,
        'this session is initialized already; start a new session without Mcp-Session-Id',
      );
    default:
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

/**
 * completion/complete goes to the backend that owns the referenced prompt (by its prefixed
 * name, passed on unprefixed) or resource template (by URI, as resources/read routes it).
 */
async function complete(
  broker: McpBroker,
  catalog: PermittedCatalog,
  id: JsonRpcRequest['id'],
  params: Record<string, unknown>,
): Promise<JsonRpcResponse> {
  const ref = params.ref as Record<string, unknown> | undefined;
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
    const route = catalog.routePrompt(ref.name);
    if (!route)
      return jsonRpcError(
        id,
        JsonRpcErrorCode.InvalidParams,
        `unknown prompt "${ref.name.slice(0, 200)}"`,
      );
    return forward(broker, id, route.backend, 'completion/complete', {
      ...params,
      ref: { ...ref, name: route.originalName },
    });
  }
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
    const backend = catalog.routeResource(ref.uri);
    if (backend === undefined) {
      return jsonRpcError(
        id,
        JsonRpcErrorCode.InvalidParams,
        `unknown resource "${ref.uri.slice(0, 200)}"`,
      );
    }
    return forward(broker, id, backend, 'completion/complete', params);
  }
  return jsonRpcError(
    id,
    JsonRpcErrorCode.InvalidParams,
    'completion/complete needs params.ref: {type: "ref/prompt", name} or {type: "ref/resource", uri}',
  );
}

async function forward(
  broker: McpBroker,
  id: JsonRpcRequest['id'],
  backend: string,
  method: string,
  params: Record<string, unknown>,
): Promise<JsonRpcResponse> {
  const connection = broker.connection(backend);
  if (!connection)
    return jsonRpcError(id, JsonRpcErrorCode.InternalError, `backend ${backend} is not configured`);
  try {
    return jsonRpcResult(
      id,
      await connection.request(method, params, { signal: broker.shutdownSignal }),
    );
  } catch (error) {
    return { jsonrpc: '2.0', id, error: toClientError(error) };
  }
}

async function callTool(context: DispatchContext): Promise<void> {
  const { broker, session, request, res, catalog, toolCallAuditor } = context;
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
      { principal: session.principal, server: hidden?.backend, tool },
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
    { principal: session.principal, server: backend.name, tool: route.originalName },
    request.id,
  );
  const ended = callEndSignal(res, [session.ended.signal, broker.shutdownSignal]);
  try {
    await broker.toolCalls.handleToolCall({
      clientSession: session,
      backend,
      request: { ...request, params: { ...params, name: route.originalName } },
      reply: clientReplyOf(res),
      openEventStream: () =>
        audit.observe(
          openBrokerEventStream(
            broker,
            res,
            { 'Mcp-Session-Id': session.id },
            { deferHeadersMs: TOOL_CALL_HEADER_DEADLINE_MS },
          ),
        ),
      signal: ended.signal,
    });
  } finally {
    ended.release();
    await audit.finish();
  }
}
