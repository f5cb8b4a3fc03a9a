/*
 * One request to the MCP endpoint as the request pipeline carries it (mcpEndpoint.ts): a POSTed
 * message (its kind, method, id and params) or one of a session's two transport operations (GET:
 * its event stream; DELETE: its end), which protocol era serves it, who sent it, and — filled in
 * by the admission chain (admission.ts) — its session, what its principal may do, and where its
 * method's item lives (its route). Every step and every method handler reads this one object;
 * the answer goes out through its ResponseWriter, the only way a request is answered.
 *
 * Reading the body (`readMcpMessage`) is the edge's part: one JSON-RPC message as JSON (no
 * batches), nested no deeper than the limit, classified by its envelope; a message the broker
 * cannot read is refused with 400 and a JSON-RPC error that says what to fix.
 */
import type { Request } from 'express';
import type { AggregatedCatalog } from '../broker/AggregatedCatalog';
import type { CuratedEndpoint } from '../endpoints/CuratedEndpoint';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import type { PrincipalAccess } from '../permissions/BrokerAccessControl';
import {
  classifyJsonRpc,
  isJsonRpcId,
  isPlainObject,
  JsonRpcErrorCode,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/jsonRpc';
import { MAX_CLIENT_JSON_DEPTH, memberNestedTooDeep } from '../protocol/jsonDepth';
import type { ProtocolEra } from '../protocol/modernEra';
import type { ParamHeaderDeclaration } from '../protocol/paramHeaders';
import type { ModernRequestContext } from '../protocol/requestMetadata';
import type { ClientSession } from '../sessions/ClientSessionRegistry';
import type { ClientRequestTelemetry } from '../telemetry/BrokerTelemetry';
import type { ResponseWriter } from './ResponseWriter';

/** A JSON-RPC message as a client POSTed it, by kind. */
export type ClientMessage =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse };

/**
 * A session's transport operation, which carries no JSON-RPC message: GET opens the session's
 * event stream, DELETE ends the session.
 */
export type SessionOperation = { kind: 'open-stream' } | { kind: 'end-session' };

/**
 * Where a method's item lives: the backend that owns the tool, prompt or resource, and the
 * item's own name there (the tool or prompt name without the prefix, or the resource URI).
 */
export interface McpRoute {
  /** The backend's configured name. */
  readonly backend: string;
  readonly name: string;
  /** A tool's `x-mcp-header` declarations (absent when it has none). */
  readonly paramHeaders?: readonly ParamHeaderDeclaration[];
  /**
   * Set when an MCP App called its server's tool by the server's own name (contract §3.6): how
   * the name was resolved, and for a hint the server it named.
   */
  readonly appCall?: { readonly resolution: 'hint' | 'unique'; readonly origin?: string };
}

/** One request on its way through the pipeline; see the file comment. */
export interface McpRequest {
  /** The protocol era that serves it (chosen per request, spec §9). */
  readonly era: ProtocolEra;
  /** The authenticated principal (`user:<entity ref>` or `service:<subject>`). */
  readonly principal: string;
  /** The POSTed message, or the session operation of a GET or DELETE. */
  readonly message: ClientMessage | SessionOperation;
  /** The request's or notification's method; undefined for a response or a session operation. */
  readonly method: string | undefined;
  /** The request's id (null for notifications, responses and session operations). */
  readonly id: JsonRpcId | null;
  /** The params (a 2026-07-28 request's without its envelope, see withoutRequestEnvelope). */
  readonly params: Record<string, unknown>;
  readonly req: Request;
  /**
   * The curated endpoint the request came through (spec §13; absent on /mcp): the access step
   * narrows the principal's view to it, and a session is found only on its own path.
   */
  readonly endpoint?: CuratedEndpoint;
  /** The one way this request is answered. */
  readonly writer: ResponseWriter;
  /**
   * A request's metrics and span (spec §12), from its arrival to its answer (the writer tells it
   * how the answer ended); absent for a client's answers and notifications.
   */
  readonly telemetry?: ClientRequestTelemetry;
  /** The client session (session era; set by the admission chain). */
  session?: ClientSession;
  /** What a 2026-07-28 request's `_meta` declared (set before the chain). */
  context?: ModernRequestContext;
  /** What the principal may do (set by the chain's access step). */
  access?: PrincipalAccess;
  /** Where the method's item lives (set after access, for methods that name one). */
  route?: McpRoute;
  /**
   * The access grant whose plan admitted the call (its feed id; set by the rate-limit step), so
   * the call's audit event names it (contract mcp-access §6.4).
   */
  grant?: string;
}

/** The catalog as the request's principal may use it (after the access step). */
export function permittedCatalogOf(request: McpRequest): PermittedCatalog {
  if (request.access === undefined) {
    // A wiring mistake in the pipeline, never a client's.
    throw new Error('MCP broker: the access step did not run for this request');
  }
  return request.access.catalog;
}

/**
 * `{ endpoint: <name> }` for a request through a curated endpoint, `{}` on /mcp: the field its
 * session and audit events carry (spec §13).
 */
export function endpointFieldOf(request: Pick<McpRequest, 'endpoint'>): { endpoint?: string } {
  return request.endpoint === undefined ? {} : { endpoint: request.endpoint.name };
}

/** A message the edge refused: the HTTP status and JSON-RPC error to answer with. */
export interface UnreadableMessage {
  readonly refused: { status: number; code: number; message: string; id: JsonRpcId | null };
}

/** Reads the POST body (text) as one JSON-RPC message; see the file comment. */
export function readMcpMessage(
  text: string,
): { body: Record<string, unknown>; message: ClientMessage } | UnreadableMessage {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refused(
      400,
      JsonRpcErrorCode.ParseError,
      'Parse error: the body must be one JSON-RPC message as JSON',
    );
  }
  if (Array.isArray(body)) {
    return refused(
      400,
      JsonRpcErrorCode.InvalidRequest,
      'JSON-RPC batches are not supported; send one message per POST',
    );
  }
  const id = isPlainObject(body) && isJsonRpcId(body.id) ? body.id : null;
  // Before anything walks the message (serialising it for a backend recurses per level).
  const tooDeep = isPlainObject(body) ? memberNestedTooDeep(body) : undefined;
  if (tooDeep !== undefined) {
    const code =
      tooDeep === 'params' ? JsonRpcErrorCode.InvalidParams : JsonRpcErrorCode.InvalidRequest;
    const message = `${tooDeep.slice(0, 40)} nested deeper than ${MAX_CLIENT_JSON_DEPTH} levels`;
    return refused(400, code, message, id);
  }
  const message = classifyJsonRpc(body);
  if (!message) {
    return refused(
      400,
      JsonRpcErrorCode.InvalidRequest,
      'Invalid Request: not a JSON-RPC 2.0 request, notification or response',
      id,
    );
  }
  return { body: body as Record<string, unknown>, message };
}

function refused(
  status: number,
  code: number,
  message: string,
  id: JsonRpcId | null = null,
): UnreadableMessage {
  return { refused: { status, code, message, id } };
}

/**
 * The backend a tool name resolves to in the whole catalog, whether or not the principal may
 * use it (for the audit trail: a denied tool answers like an unknown one, but is recorded as
 * denied).
 */
export function hiddenToolRoute(
  catalog: AggregatedCatalog,
  name: string,
): { backend: string; name: string } | undefined {
  const route = catalog.routeTool(name);
  return route && { backend: route.backend, name: route.originalName };
}
