/*
 * The client-facing MCP endpoint (streamable HTTP): POST for messages, GET for a session's
 * event stream, DELETE to end the session. Every request is the same pipeline:
 *
 *   the edge (principal, body, Host/Origin) → one McpRequest (era, principal, what it asks:
 *   a POSTed message with its method and params, or a session operation) → the method's entry
 *   (methodTable.ts) → the admission chain (admission.ts: era checks → drain → authentication →
 *   access → limits) → the params the method table requires (-32602, one wording) → the
 *   entry's handler, or the session operation (sessionOperations.ts), answering through the
 *   request's ResponseWriter.
 *
 * A request (not a client's answer or notification) is measured and traced from the moment its
 * McpRequest exists to the end of its answer (spec §12): its telemetry continues the client's
 * trace context, everything the pipeline does for it runs in that context (log lines carry its
 * trace id), and its ResponseWriter tells it how the answer ended.
 *
 * The same handler serves every curated endpoint (`/endpoints/<name>/mcp`, spec §13): the
 * request carries its endpoint, the access step narrows the person's view to it, and a session is
 * found only on the path that made it; a name no endpoint has is 404.
 *
 * The era is chosen per request (spec §9): a POST with the 2026-07-28 `_meta` envelope (or a
 * modern `MCP-Protocol-Version` header) is served statelessly, everything else in its session;
 * GET and DELETE belong to sessions. Each era's own checks are the chain's first step
 * (eraChecks.ts), before a permission is asked. A session's client answers (JSON-RPC responses)
 * and notifications go to the ToolCallHandler once authenticated; a session-era method the
 * broker does not have is -32601 in band.
 */
import type { Request, Response } from 'express';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import type { McpBroker } from '../broker/McpBroker';
import {
  isPlainObject,
  JsonRpcErrorCode,
  jsonRpcError,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../protocol/jsonRpc';
import {
  ModernHeader,
  ModernMetaKey,
  requestEra,
  withoutRequestEnvelope,
} from '../protocol/modernEra';
import { invalidParamsOf, missingExtensionOf } from '../protocol/mcpMethods';
import { missingExtensionError } from '../protocol/requestMetadata';
import { ALL_PROTOCOL_VERSIONS } from '../protocol/versions';
import type { BrokerTelemetry, ClientRequestStart } from '../telemetry/BrokerTelemetry';
import type { ClientResponseContext, ClientResponseOutcome } from '../types';
import { Admission, type AdmissionStep } from './admission';
import { checkLimitedMethods, createMethodTable, methodOf, type MethodEntry } from './methodTable';
import { type McpRequest, readMcpMessage, type SessionOperation } from './mcpRequest';
import type { DnsRebindingProtectionConfig } from '../config';
import { checkHostOrigin } from './hostOriginGuard';
import type { PrincipalAccessDeps } from './principalAccess';
import { readBody, type RequestBodyLimits } from './requestBody';
import type { VerifiedPrincipalCache } from './VerifiedPrincipalCache';
import { headerValue, refuseStoreUnavailable } from './protocol';
import { authenticateRequest, principalOf } from './requirePrincipal';
import { type AnswerShape, JSON_ANSWER, ResponseWriter } from './ResponseWriter';
import { methodNotFound } from './sessionMethods';
import { endClientSession, openSessionStream } from './sessionOperations';
import { answerTaskInput } from './taskInputAnswers';
import type { CredentialStep } from './credentialStep';
import type { CuratedEndpoint } from '../endpoints/CuratedEndpoint';
import type { EndpointLookup } from '../endpoints/CuratedEndpoints';

/**
 * Dependencies of the endpoint handlers. The edge has authenticated every request before a
 * handler runs; handlers read the principal with principalOf(res).
 */
export interface McpEndpointDeps extends PrincipalAccessDeps {
  broker: McpBroker;
  toolCallAuditor: ToolCallAuditor;
  /** Metrics and traces of client requests (spec §12). */
  telemetry: BrokerTelemetry;
  /** Steps of the admission chain's `limits` stage (admission.ts); none by default. */
  limits?: readonly AdmissionStep[];
  /** `mcpBroker.rateLimits.methods`: each must be a method the table marks `limited`. */
  rateLimitedMethods?: readonly string[];
  /** The credential step of a person's requests (spec §11). */
  credentialStep?: CredentialStep;
  /** The curated endpoints (spec §13), served where the route has an `endpoint` parameter. */
  endpoints?: EndpointLookup;
}

/**
 * A session's `tools/call` answer sends its headers with its first event (usually the result,
 * so a quick call leaves in one packet), or after this long when the tool is slow and silent.
 */
const TOOL_CALL_HEADER_DEADLINE_MS = 1_000;

/** HTTP status of each outcome of a client's JSON-RPC response. */
const CLIENT_RESPONSE_STATUS: Record<ClientResponseOutcome['outcome'], number> = {
  delivered: 202,
  'unknown-id': 404,
  'backend-failed': 502,
  'credential-failed': 403,
};

/** What the endpoint's edge checks before any method: who asks, the body, Host and Origin. */
export interface McpEndpointEdge {
  /** Verified principals (a token verified once is remembered, see VerifiedPrincipalCache). */
  principals: VerifiedPrincipalCache;
  /** Answers a request without a valid token: 401 with the OAuth challenge. */
  onUnauthenticated: (req: Request, res: Response) => void;
  /** `maxRequestBodyBytes`, `requestBodyTimeout`. */
  bodyLimits: RequestBodyLimits;
  /** `dnsRebindingProtection`. */
  dnsRebindingProtection: DnsRebindingProtectionConfig;
}

/**
 * The MCP endpoint: one Express handler for `/mcp`, whatever the method. Its edge runs first, in
 * the order of answers the broker has always had — the principal (401/403), the body (413, 408,
 * 415, 400), Host and Origin (403) — then POST, GET or DELETE over one method table and one
 * admission chain; any other method is 405. One handler instead of a chain of Express
 * middleware: a request pays Express's routing once.
 */
export function mcpEndpoint(deps: McpEndpointDeps, edge: McpEndpointEdge) {
  const methods = createMethodTable(deps);
  checkLimitedMethods(methods, deps.rateLimitedMethods);
  const admission = new Admission(
    deps,
    (request, entry) => serve(deps, request, entry),
    deps.limits,
  );
  const post = postHandler(deps, methods, admission);
  // Each step hands its promise on instead of awaiting it: a pass-through is not a hop.
  const dispatch = (
    req: Request,
    res: Response,
    endpoint: CuratedEndpoint | undefined,
  ): Promise<void> => {
    switch (req.method) {
      case 'POST':
        return post(req, res, endpoint);
      case 'GET':
      case 'HEAD': // Express serves HEAD with a route's GET handler
        return admission.run(sessionOperation(deps, req, res, endpoint, 'open-stream'), undefined);
      case 'DELETE':
        return admission.run(sessionOperation(deps, req, res, endpoint, 'end-session'), undefined);
      default:
        res.setHeader('Allow', 'GET, POST, DELETE');
        new ResponseWriter(res).refuse(
          405,
          JsonRpcErrorCode.InvalidRequest,
          'Use POST, GET or DELETE on /mcp',
        );
        return Promise.resolve();
    }
  };
  return (req: Request, res: Response): Promise<void> =>
    passEdge(deps, edge, req, res).then(passed =>
      passed === undefined ? undefined : dispatch(req, res, passed.endpoint),
    );
}

/**
 * The edge (see {@link mcpEndpoint}): the request's curated endpoint when it passed, undefined
 * after answering it.
 */
async function passEdge(
  deps: McpEndpointDeps,
  edge: McpEndpointEdge,
  req: Request,
  res: Response,
): Promise<{ endpoint: CuratedEndpoint | undefined } | undefined> {
  if (!(await authenticateRequest(edge.principals, req, res, edge.onUnauthenticated))) {
    return undefined;
  }
  if (!(await readBody(req, res, edge.bodyLimits))) return undefined;
  if (!checkHostOrigin(edge.dnsRebindingProtection, req, res)) return undefined;
  const endpoint = curatedEndpointOf(deps, req, res);
  return endpoint === null ? undefined : { endpoint };
}

/**
 * The curated endpoint a request's path names (`/endpoints/<name>/mcp`; undefined on /mcp), or
 * null after answering 404 for a name no endpoint has.
 */
function curatedEndpointOf(
  deps: McpEndpointDeps,
  req: Request,
  res: Response,
): CuratedEndpoint | undefined | null {
  const name: string | undefined = req.params.endpoint;
  if (name === undefined) return undefined;
  const endpoint = deps.endpoints?.get(name);
  if (endpoint !== undefined) return endpoint;
  new ResponseWriter(res).refuse(
    404,
    JsonRpcErrorCode.InvalidRequest,
    `No MCP endpoint named "${name.slice(0, 63)}"; GET /api/mcp-broker/status lists them`,
  );
  return null;
}

/** POST /mcp: one JSON-RPC message (batches are not part of MCP since 2025-06-18). */
function postHandler(
  deps: McpEndpointDeps,
  methods: ReadonlyMap<string, MethodEntry>,
  admission: Admission,
) {
  const { broker } = deps;
  return (req: Request, res: Response, endpoint: CuratedEndpoint | undefined): Promise<void> => {
    const read = readMcpMessage(typeof req.body === 'string' ? req.body : '');
    if ('refused' in read) {
      const { status, code, message, id } = read.refused;
      new ResponseWriter(res).refuse(status, code, message, id);
      return Promise.resolve();
    }
    const { body, message } = read;
    const era =
      message.kind !== 'response' &&
      requestEra(body, headerValue(req, ModernHeader.protocolVersion)) === 'modern'
        ? 'modern'
        : 'legacy';
    const method = message.kind === 'response' ? undefined : message.message.method;
    const entry = method === undefined ? undefined : methodOf(methods, method, era);
    // A session's stream names the session (authentication refuses it without a valid one).
    const sessionId = headerValue(req, 'mcp-session-id');
    const streamHeaders: Record<string, string> =
      era === 'legacy' && sessionId !== undefined ? { 'Mcp-Session-Id': sessionId } : {};
    const telemetry =
      message.kind === 'request'
        ? deps.telemetry.clientRequest({
            ...telemetryStart(req, message.message, era),
            ...(endpoint === undefined ? {} : { endpoint: endpoint.name }),
          })
        : undefined;
    const writer = new ResponseWriter(
      res,
      broker,
      answerShape(deps, era, entry, streamHeaders),
      telemetry,
    );
    const params = message.kind === 'response' ? {} : (message.message.params ?? {});
    const request: McpRequest = {
      era,
      principal: principalOf(res),
      message,
      method,
      id: message.kind === 'request' ? message.message.id : null,
      params: era === 'modern' ? withoutRequestEnvelope(params) : params,
      req,
      writer,
      ...(telemetry === undefined ? {} : { telemetry }),
      ...(endpoint === undefined ? {} : { endpoint }),
    };
    return telemetry === undefined
      ? admission.run(request, entry)
      : telemetry.run(() => admission.run(request, entry));
  };
}

/**
 * What the request's telemetry starts with: its method, era, id, the protocol version it speaks
 * (when the broker speaks it), and where the client's trace context may be (headers, `_meta`).
 */
function telemetryStart(
  req: Request,
  request: JsonRpcRequest,
  era: McpRequest['era'],
): ClientRequestStart {
  const meta = request.params?._meta;
  const modernVersion = isPlainObject(meta) ? meta[ModernMetaKey.protocolVersion] : undefined;
  const version = era === 'modern' ? modernVersion : headerValue(req, 'mcp-protocol-version');
  const start: ClientRequestStart = {
    method: request.method,
    era,
    requestId: request.id,
    headers: req.headers,
  };
  if (typeof version === 'string' && ALL_PROTOCOL_VERSIONS.includes(version)) {
    start.protocolVersion = version;
  }
  if (meta !== undefined) start.meta = meta;
  return start;
}

/**
 * The admitted request: its method, a session's answer or notification, or a session operation.
 * Each branch hands its promise on (no hop of its own on a call's stack).
 */
function serve(
  deps: McpEndpointDeps,
  request: McpRequest,
  entry: MethodEntry | undefined,
): Promise<void> {
  const { broker } = deps;
  switch (request.message.kind) {
    case 'open-stream':
      return openSessionStream(deps, request);
    case 'end-session':
      return endClientSession(broker, request);
    case 'response':
      return takeClientResponse(deps, request, request.message.message);
    case 'notification':
      return takeClientNotification(broker, request, request.message.message);
    default:
  }
  if (entry === undefined) return methodNotFound(request);
  // A 2026-07-28 method of an extension is the client's only once it declared the extension.
  const extension =
    request.era === 'modern'
      ? missingExtensionOf(request.method!, request.context?.clientCapabilities)
      : undefined;
  if (extension !== undefined) {
    const refusal = missingExtensionError(extension);
    const { writer } = request;
    writer.refuse(refusal.httpStatus, refusal.code, refusal.message, request.id, refusal.data);
    return Promise.resolve();
  }
  // Every method's params are checked here, against its entry in the method table, and worded
  // the same way; its handler sees params that hold what the table requires.
  const invalid = invalidParamsOf(request.method!, request.params);
  if (invalid !== undefined) {
    request.writer.answer(jsonRpcError(request.id!, JsonRpcErrorCode.InvalidParams, invalid));
    return Promise.resolve();
  }
  return entry.handler(request);
}

/** A session's client answer (to an elicitation or sampling request), routed to the backend. */
async function takeClientResponse(
  deps: McpEndpointDeps,
  request: McpRequest,
  message: JsonRpcResponse,
): Promise<void> {
  const { broker } = deps;
  const { writer } = request;
  try {
    // A task's input asked on a tasks/result stream, else a call's request.
    const answered =
      (await answerTaskInput(deps, request, message)) ??
      (await broker.toolCalls.handleClientResponse({
        clientSession: request.session!,
        message,
        ...(deps.credentialStep === undefined
          ? {}
          : { personalHeaders: answerCredentialOf(deps.credentialStep, broker, request) }),
      }));
    answerClientResponse(writer, answered);
  } catch (error) {
    // Claiming the id needs the (possibly shared) store; nothing was delivered.
    if (!writer.answered) refuseStoreUnavailable(broker, writer, error);
    else throw error;
  }
}

/** A session's notification: a cancellation goes to the calls; every notification is 202. */
async function takeClientNotification(
  broker: McpBroker,
  request: McpRequest,
  notification: JsonRpcNotification,
): Promise<void> {
  if (notification.method === 'notifications/cancelled') {
    await broker.toolCalls.handleClientNotification({
      clientSession: request.session!,
      notification,
    });
  }
  request.writer.res.status(202).end();
}

/**
 * The credential of a session's answer to a server acting with each person's identity, obtained
 * for the answering request (spec §11): the credential step's, for the session's principal.
 */
function answerCredentialOf(
  step: CredentialStep,
  broker: McpBroker,
  request: McpRequest,
): NonNullable<ClientResponseContext['personalHeaders']> {
  const session = request.session!;
  return async name => {
    const backend = broker.server(name);
    if (backend === undefined) return undefined;
    return step.answerHeaders(
      request.req,
      {
        principal: session.principal,
        era: 'legacy',
        clientSessionId: session.id,
        clientCapabilities: session.clientCapabilities,
      },
      backend,
    );
  };
}

/** How a request's answer may be given (see ResponseWriter), by its method and era. */
function answerShape(
  deps: McpEndpointDeps,
  era: McpRequest['era'],
  entry: MethodEntry | undefined,
  headers: Record<string, string>,
): AnswerShape {
  if (entry?.answer !== 'call') return JSON_ANSWER;
  if (era === 'modern') {
    // Plain JSON until something must stream, or a keep-alive is due.
    return { finalAlone: 'json', openAfterMs: deps.broker.config.keepAliveMs };
  }
  return entry.audit === 'tool-call'
    ? { finalAlone: 'stream', openAfterMs: TOOL_CALL_HEADER_DEADLINE_MS, headers }
    : { finalAlone: 'json', headers };
}

/** Answers the POST that carried a client's JSON-RPC response (202, or an error body). */
function answerClientResponse(writer: ResponseWriter, answered: ClientResponseOutcome): void {
  if (writer.answered) return;
  const status = CLIENT_RESPONSE_STATUS[answered.outcome];
  if (answered.error === undefined) {
    writer.res.status(status).end();
    return;
  }
  const response: JsonRpcResponse = { jsonrpc: '2.0', id: null, error: answered.error };
  writer.answer(response, status);
}

/**
 * GET or DELETE /mcp as a request of the pipeline: the session operation, in the session era
 * (a 2026-07-28 client without a session is refused by the era checks).
 */
function sessionOperation(
  deps: McpEndpointDeps,
  req: Request,
  res: Response,
  endpoint: CuratedEndpoint | undefined,
  kind: SessionOperation['kind'],
): McpRequest {
  return {
    era: 'legacy',
    principal: principalOf(res),
    message: { kind },
    method: undefined,
    id: null,
    params: {},
    req,
    writer: new ResponseWriter(res, deps.broker),
    ...(endpoint === undefined ? {} : { endpoint }),
  };
}
