/*
 * The client-facing MCP endpoint (streamable HTTP): POST for messages, GET for the session's
 * event stream, DELETE to end the session. Each handler is parse → call → respond; the
 * protocol work lives in the broker, the dispatcher and the ToolCallHandler.
 */
import type { Request, Response } from 'express';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import {
  classifyJsonRpc,
  JsonRpcErrorCode,
  jsonRpcResult,
  isJsonRpcId,
  isPlainObject,
  type JsonRpcId,
} from '../protocol/jsonRpc';
import { MAX_CLIENT_JSON_DEPTH, memberNestedTooDeep } from '../protocol/jsonDepth';
import { ModernHeader, requestEra } from '../protocol/modernEra';
import type { McpBroker } from '../broker/McpBroker';
import type { ClientEventStream, ClientResponseOutcome } from '../types';
import { ClientSession, SessionLimitError } from '../sessions/ClientSessionRegistry';
import { boundSessionInit } from '../sessions/boundedSessionInit';
import { dispatchClientRequest } from './clientRequestDispatcher';
import { serveModernMessage } from './modernRequestHandler';
import {
  credentialKeyOf,
  PrincipalAccessDeps,
  requestAccess,
  sendSessionCreateDenied,
} from './principalAccess';
import { headerValue, sendShuttingDown, sendTransportError } from './protocol';
import { openBrokerEventStream } from './SseClientStream';
import {
  BROKER_IMPLEMENTATION,
  BROKER_INSTRUCTIONS,
  isModernProtocolVersion,
  isSupportedProtocolVersion,
  LATEST_PROTOCOL_VERSION,
  PROTOCOL_VERSIONS,
} from '../protocol/versions';
import { principalOf } from './requirePrincipal';

/**
 * Dependencies of the endpoint handlers. The router's requirePrincipal has authenticated every
 * request before a handler runs; handlers read the principal with principalOf(res).
 */
export interface McpEndpointDeps extends PrincipalAccessDeps {
  broker: McpBroker;
  toolCallAuditor: ToolCallAuditor;
}

/**
 * The session store (the shared database with several replicas) failed: the client may retry,
 * so 503 with a JSON-RPC body; the cause goes to the log, not to the client.
 */
function sendStoreUnavailable(
  deps: McpEndpointDeps,
  res: Response,
  error: unknown,
  id: string | number | null = null,
) {
  deps.broker.logger.warn(`MCP broker: the session store is unavailable: ${error}`);
  sendTransportError(
    res,
    503,
    JsonRpcErrorCode.InternalError,
    'The MCP broker cannot reach its session store right now; retry shortly',
    id,
  );
}

/** A session limit is reached (the message names it). */
function sendSessionLimit(res: Response, error: SessionLimitError, id: JsonRpcId | null = null) {
  sendTransportError(res, 429, JsonRpcErrorCode.ServerError, error.message, id);
}

/** Finds the request's session for its principal, or answers 400/404 and returns undefined. */
async function requireSession(
  deps: McpEndpointDeps,
  req: Request,
  res: Response,
): Promise<ClientSession | undefined> {
  const principal = principalOf(res);
  const id = headerValue(req, 'mcp-session-id');
  if (id === undefined || id === '') {
    sendTransportError(
      res,
      400,
      JsonRpcErrorCode.ServerError,
      'Mcp-Session-Id header required; send initialize first to start a session',
    );
    return undefined;
  }
  let session: ClientSession | undefined;
  try {
    session = await deps.broker.sessions.get(id, principal);
  } catch (error) {
    if (error instanceof SessionLimitError) sendSessionLimit(res, error);
    else sendStoreUnavailable(deps, res, error);
    return undefined;
  }
  if (!session) {
    sendTransportError(
      res,
      404,
      JsonRpcErrorCode.SessionNotFound,
      'Session not found; it ended or belongs to someone else. Initialize a new session',
    );
    return undefined;
  }
  const version = headerValue(req, 'mcp-protocol-version');
  if (version !== undefined && !PROTOCOL_VERSIONS.includes(version)) {
    sendTransportError(
      res,
      400,
      JsonRpcErrorCode.InvalidRequest,
      `Unsupported MCP-Protocol-Version "${version.slice(0, 40)}"; supported: ${PROTOCOL_VERSIONS.join(', ')}`,
    );
    return undefined;
  }
  return session;
}

/** POST /mcp: one JSON-RPC message (batches are not part of MCP since 2025-06-18). */
export function postHandler(deps: McpEndpointDeps) {
  return async (req: Request, res: Response) => {
    const raw = typeof req.body === 'string' ? req.body : '';
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      sendTransportError(
        res,
        400,
        JsonRpcErrorCode.ParseError,
        'Parse error: the body must be one JSON-RPC message as JSON',
      );
      return;
    }
    if (Array.isArray(body)) {
      sendTransportError(
        res,
        400,
        JsonRpcErrorCode.InvalidRequest,
        'JSON-RPC batches are not supported; send one message per POST',
      );
      return;
    }
    const id = isPlainObject(body) && isJsonRpcId(body.id) ? body.id : null;
    // Before anything walks the message (serialising it for a backend recurses per level).
    const tooDeep = isPlainObject(body) ? memberNestedTooDeep(body) : undefined;
    if (tooDeep !== undefined) {
      const code =
        tooDeep === 'params' ? JsonRpcErrorCode.InvalidParams : JsonRpcErrorCode.InvalidRequest;
      const message = `${tooDeep.slice(0, 40)} nested deeper than ${MAX_CLIENT_JSON_DEPTH} levels`;
      sendTransportError(res, 400, code, message, id);
      return;
    }
    const message = classifyJsonRpc(body);
    if (!message) {
      sendTransportError(
        res,
        400,
        JsonRpcErrorCode.InvalidRequest,
        'Invalid Request: not a JSON-RPC 2.0 request, notification or response',
        id,
      );
      return;
    }
    // The era is chosen per request (spec §9): a request with the 2026-07-28 `_meta` envelope (or
    // a modern MCP-Protocol-Version header) is served statelessly; everything else as before.
    if (
      message.kind !== 'response' &&
      requestEra(body, headerValue(req, ModernHeader.protocolVersion)) === 'modern'
    ) {
      await serveModernMessage(deps, req, res, message);
      return;
    }
    if (message.kind === 'request' && deps.broker.draining) {
      // Answers and cancellations still go through: the calls in flight are draining.
      sendShuttingDown(res, message.message.id);
      return;
    }
    if (message.kind === 'request' && message.message.method === 'initialize') {
      await initialize(deps, req, res, message.message);
      return;
    }
    const session = await requireSession(deps, req, res);
    if (!session) return;
    // A running request (a long tool call) keeps the session alive in the shared store.
    await deps.broker.sessions.whileRequestRuns(session, async () => {
      if (message.kind === 'response') {
        try {
          const answered = await deps.broker.toolCalls.handleClientResponse({
            clientSession: session,
            message: message.message,
          });
          sendClientResponseOutcome(res, answered);
        } catch (error) {
          // Claiming the id needs the (possibly shared) store; nothing was delivered.
          if (!res.headersSent) sendStoreUnavailable(deps, res, error);
          else throw error;
        }
        return;
      }
      if (message.kind === 'notification') {
        if (message.message.method === 'notifications/cancelled') {
          await deps.broker.toolCalls.handleClientNotification({
            clientSession: session,
            notification: message.message,
          });
        }
        res.status(202).end();
        return;
      }
      const access = await requestAccess(deps, req, res, message.message.id);
      if (!access) return;
      // Checked again after the session look-up and the permission decision: from here to the
      // call's registration nothing waits, so a drain that began meanwhile either refuses the
      // request or sees its call.
      if (deps.broker.draining) {
        sendShuttingDown(res, message.message.id);
        return;
      }
      await dispatchClientRequest({
        broker: deps.broker,
        session,
        request: message.message,
        req,
        res,
        catalog: access.catalog,
        toolCallAuditor: deps.toolCallAuditor,
      });
    });
  };
}

async function initialize(
  deps: McpEndpointDeps,
  req: Request,
  res: Response,
  request: { id: string | number; params?: Record<string, unknown> },
) {
  const principal = principalOf(res);
  if (headerValue(req, 'mcp-session-id') !== undefined) {
    sendTransportError(
      res,
      400,
      JsonRpcErrorCode.InvalidRequest,
      'initialize starts a new session: send it without Mcp-Session-Id',
      request.id,
    );
    return;
  }
  const access = await requestAccess(deps, req, res, request.id);
  if (!access) return;
  if (!access.mayCreateSession) {
    sendSessionCreateDenied(res, 'starting an MCP session', request.id);
    return;
  }
  const params = request.params ?? {};
  const bounded = boundSessionInit(params);
  if (!bounded.ok) {
    sendTransportError(res, 400, JsonRpcErrorCode.InvalidParams, bounded.message, request.id);
    return;
  }
  const requested = params.protocolVersion;
  const protocolVersion = isSupportedProtocolVersion(requested)
    ? requested
    : LATEST_PROTOCOL_VERSION;
  let session: ClientSession;
  try {
    session = await deps.broker.sessions.create({
      principal,
      protocolVersion,
      ...bounded.init,
    });
  } catch (error) {
    if (error instanceof SessionLimitError) sendSessionLimit(res, error, request.id);
    else sendStoreUnavailable(deps, res, error, request.id);
    return;
  }
  res.setHeader('Mcp-Session-Id', session.id);
  res.json(
    jsonRpcResult(request.id, {
      protocolVersion,
      capabilities: deps.broker.serverCapabilities(),
      serverInfo: BROKER_IMPLEMENTATION,
      instructions: BROKER_INSTRUCTIONS,
    }),
  );
}

/**
 * GET and DELETE belong to sessions. A 2026-07-28 client (a modern MCP-Protocol-Version header
 * and no session id) gets what a server of that revision answers them: 405, POST only
 * (`streamable-http.mdx` §Earlier Streamable HTTP Revisions). True when it answered.
 */
function refuseModernWithoutSession(req: Request, res: Response): boolean {
  const version = headerValue(req, ModernHeader.protocolVersion)?.trim();
  if (version === undefined || !isModernProtocolVersion(version)) return false;
  if (headerValue(req, 'mcp-session-id') !== undefined) return false;
  res.setHeader('Allow', 'POST');
  sendTransportError(
    res,
    405,
    JsonRpcErrorCode.InvalidRequest,
    `MCP ${version.slice(0, 40)} has no ${req.method} on this endpoint: send requests with POST ` +
      '(change notifications come over a subscriptions/listen request)',
  );
  return true;
}

/** GET /mcp: the session's event stream (one per session). */
export function getHandler(deps: McpEndpointDeps) {
  return async (req: Request, res: Response) => {
    if (refuseModernWithoutSession(req, res)) return;
    if (deps.broker.draining) {
      sendShuttingDown(res);
      return;
    }
    const session = await requireSession(deps, req, res);
    if (!session) return;
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      sendTransportError(
        res,
        406,
        JsonRpcErrorCode.InvalidRequest,
        'GET needs Accept: text/event-stream',
      );
      return;
    }
    const alreadyOpen = () =>
      sendTransportError(
        res,
        409,
        JsonRpcErrorCode.InvalidRequest,
        'This session already has an open GET stream; close it before opening another',
      );
    // The same rule on every replica: the stream lease lives in the (possibly shared) store.
    let stream: ClientEventStream | 'already-open';
    try {
      stream = await deps.broker.sessions.attachEventStream(
        session,
        () => openBrokerEventStream(deps.broker, res, { 'Mcp-Session-Id': session.id }),
        error =>
          // Not fatal: an unreleased lease lapses by itself (STREAM_LEASE_MS).
          deps.broker.logger.warn(
            `MCP broker: could not release a client stream's lease: ${error}`,
          ),
        credentialKeyOf(req, principalOf(res)),
      );
    } catch (error) {
      sendStoreUnavailable(deps, res, error);
      return;
    }
    if (stream === 'already-open') {
      alreadyOpen();
      return;
    }
    // The stream may stay open for hours and nothing calls next() on it: drop Express's chain
    // of routing closures (req.next → every router's restore state, ~5 KiB per stream).
    req.next = undefined;
    // The client may have gone while the lease was taken: then no close event will come.
    if (res.destroyed) stream.close();
  };
}

/** DELETE /mcp: ends the session (on every replica), its streams and its backend sessions. */
export function deleteHandler(deps: McpEndpointDeps) {
  return async (req: Request, res: Response) => {
    if (refuseModernWithoutSession(req, res)) return;
    const session = await requireSession(deps, req, res);
    if (!session) return;
    await deps.broker.endSession(session);
    res.status(204).end();
  };
}

/** HTTP status of each outcome of a client's JSON-RPC response. */
const CLIENT_RESPONSE_STATUS: Record<ClientResponseOutcome['outcome'], number> = {
  delivered: 202,
  'unknown-id': 404,
  'backend-failed': 502,
};

/** Answers the POST that carried a client's JSON-RPC response (202, or an error body). */
function sendClientResponseOutcome(res: Response, answered: ClientResponseOutcome): void {
  if (res.headersSent || res.destroyed) return;
  const status = CLIENT_RESPONSE_STATUS[answered.outcome];
  if (answered.error === undefined) {
    res.status(status).end();
    return;
  }
  res.status(status).json({ jsonrpc: '2.0', id: null, error: answered.error });
}
