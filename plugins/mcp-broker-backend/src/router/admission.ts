/*
 * The admission chain every request to the MCP endpoint passes before it is served, in both
 * eras and for every HTTP method: a POSTed message (request, notification or a client's answer),
 * a GET (the session's event stream) and a DELETE (the session's end) alike:
 *
 *   era checks → drain → authentication → access → limits → the request is served
 *
 * - era checks (eraChecks.ts): a 2026-07-28 POST's own checks (metadata 400s, unknown method
 *   404 -32601, notifications taken with 202), and 405 for a GET or DELETE of a 2026-07-28
 *   client without a session.
 * - drain: while the broker shuts down, new work is refused with 503 (Retry-After): a request,
 *   or a GET for a new event stream; a client's answers and notifications still go through (the
 *   calls in flight may need them), and so does a DELETE (ending a session is clean-up).
 * - authentication: the principal was verified at the edge (requirePrincipal: 401/403 before
 *   anything else); here the request binds to its session — a session-era request, GET or
 *   DELETE to the session its `Mcp-Session-Id` names, owned by that principal and made on the
 *   same path (main or curated endpoint; 400 without one, 404 for an unknown or foreign one,
 *   400 for an MCP-Protocol-Version the session era does not have), `initialize` to none; a
 *   2026-07-28 request is sessionless. A session's request runs as one of its requests (it keeps
 *   the session alive meanwhile).
 * - access (JSON-RPC requests only; a GET or DELETE asks no permission, spec §2): the principal's
 *   permission decision (one round trip per principal and catalog version; 503 when the
 *   permission backend cannot be asked, fail closed), narrowed to the request's curated endpoint
 *   if it came through one (spec §13); `mcp-broker.session.create` for `initialize` and every
 *   2026-07-28 request (403 naming it); then the request's route in the permitted catalog (the
 *   request's telemetry learns its server and tool or prompt; a refused
 *   `mcp-broker.session.create` counts as a denial).
 * - limits: what bounds a request's use of the broker: the drain is checked again (from here to
 *   the call's registration nothing waits, so a drain that began meanwhile refuses the request
 *   or sees its call); then the steps given to the chain: the per-person rate limit
 *   (rateLimitStep.ts), which counts only routed requests of methods the table marks `limited`.
 * Each step either passes the request on (true) or answers it through its writer (false); the
 * chain is a flat loop, so a request's stack does not grow with its steps. A session's request
 * counts as one of the session's running requests from authentication to its end.
 */
import { mcpBrokerSessionCreatePermission } from '@devportal/plugin-mcp-broker-common';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import { PROTOCOL_VERSIONS } from '../protocol/versions';
import { ClientSession, SessionLimitError } from '../sessions/ClientSessionRegistry';
import { eraChecks } from './eraChecks';
import type { MethodEntry } from './methodTable';
import type { McpRequest } from './mcpRequest';
import { requestTargetOf } from '../telemetry/BrokerTelemetry';
import { accessOf, type PrincipalAccessDeps } from './principalAccess';
import {
  headerValue,
  refuseSessionLimit,
  refuseShuttingDown,
  refuseStoreUnavailable,
} from './protocol';

/**
 * One step of the chain: true (or a promise of true) passes the request on; false means the step
 * answered it. Steps that need no I/O answer synchronously, so a request pays no promise for them.
 * The entry is the request's method (undefined for answers, notifications and unknown methods).
 */
export type AdmissionStep = (
  request: McpRequest,
  entry: MethodEntry | undefined,
) => boolean | Promise<boolean>;

/**
 * What an admitted request runs: its method, a session's answer or notification, or a session
 * operation (GET, DELETE).
 */
export type AdmittedRequestHandler = (
  request: McpRequest,
  entry: MethodEntry | undefined,
) => Promise<void>;

/** The chain; see the file comment. */
export class Admission {
  private readonly steps: readonly AdmissionStep[];

  constructor(
    private readonly deps: PrincipalAccessDeps,
    /** What an admitted request runs. */
    private readonly serve: AdmittedRequestHandler,
    /** Steps of the `limits` stage (per-person rate limits, per-server credentials). */
    limits: readonly AdmissionStep[] = [],
  ) {
    this.steps = [
      eraChecks,
      this.drain,
      this.authenticate,
      this.decideAccess,
      this.drain,
      ...limits,
    ];
  }

  /**
   * Runs `request` through the chain and, when admitted, serves it. A session's request counts
   * as running from authentication until it was served (it keeps the session alive meanwhile).
   */
  async run(request: McpRequest, entry: MethodEntry | undefined): Promise<void> {
    try {
      for (const step of this.steps) {
        const passed = step(request, entry);
        if (passed === false || (passed !== true && !(await passed))) return;
      }
      await this.serve(request, entry);
    } finally {
      if (request.session !== undefined) this.deps.broker.sessions.requestEnded(request.session);
    }
  }

  /**
   * The session named by a request's `Mcp-Session-Id` for its principal, or undefined after
   * answering 400 (none, or an unsupported protocol version header), 404 (unknown, ended or
   * another principal's), 429 (the replica's session limit) or 503 (the store failed).
   */
  private async sessionOf(request: McpRequest): Promise<ClientSession | undefined> {
    const { req, writer, principal } = request;
    const id = headerValue(req, 'mcp-session-id');
    if (id === undefined || id === '') {
      writer.refuse(
        400,
        JsonRpcErrorCode.ServerError,
        'Mcp-Session-Id header required; send initialize first to start a session',
      );
      return undefined;
    }
    let session: ClientSession | undefined;
    try {
      session = await this.deps.broker.sessions.get(id, principal);
    } catch (error) {
      if (error instanceof SessionLimitError) refuseSessionLimit(writer, error);
      else refuseStoreUnavailable(this.deps.broker, writer, error);
      return undefined;
    }
    // A session belongs to the path (the main endpoint or a curated one) that made it.
    if (!session || session.endpoint !== request.endpoint?.name) {
      writer.refuse(
        404,
        JsonRpcErrorCode.SessionNotFound,
        'Session not found; it ended or belongs to someone else. Initialize a new session',
      );
      return undefined;
    }
    const version = headerValue(req, 'mcp-protocol-version');
    if (version !== undefined && !PROTOCOL_VERSIONS.includes(version)) {
      writer.refuse(
        400,
        JsonRpcErrorCode.InvalidRequest,
        `Unsupported MCP-Protocol-Version "${version.slice(0, 40)}"; supported: ${PROTOCOL_VERSIONS.join(', ')}`,
      );
      return undefined;
    }
    return session;
  }

  private readonly drain = (request: McpRequest): boolean => {
    // Answers, notifications and a session's end still go through: the calls in flight are
    // draining.
    const { kind } = request.message;
    if (!this.deps.broker.draining || (kind !== 'request' && kind !== 'open-stream')) return true;
    refuseShuttingDown(request.writer, request.id);
    return false;
  };

  private readonly authenticate = (
    request: McpRequest,
    entry: MethodEntry | undefined,
  ): boolean | Promise<boolean> => {
    if (request.era === 'modern') return true;
    if (entry?.opensSession) {
      if (headerValue(request.req, 'mcp-session-id') === undefined) return true;
      request.writer.refuse(
        400,
        JsonRpcErrorCode.InvalidRequest,
        `${request.method} starts a new session: send it without Mcp-Session-Id`,
        request.id,
      );
      return false;
    }
    return this.sessionOf(request).then(session => {
      if (session === undefined) return false;
      // A running request (a long tool call) keeps the session alive in the shared store.
      request.session = session;
      this.deps.broker.sessions.requestStarted(session);
      return true;
    });
  };

  private readonly decideAccess = async (
    request: McpRequest,
    entry: MethodEntry | undefined,
  ): Promise<boolean> => {
    if (request.message.kind !== 'request') return true;
    const { writer, id } = request;
    try {
      const access = await accessOf(this.deps, request.req, writer.res);
      // Through a curated endpoint: the person's view ∩ the endpoint's (it never widens).
      request.access = request.endpoint?.narrowAccess(access) ?? access;
    } catch (error) {
      writer.refuse(503, JsonRpcErrorCode.InternalError, (error as Error).message, id);
      return false;
    }
    const needsSessionCreate =
      request.era === 'modern' || entry?.permission === mcpBrokerSessionCreatePermission;
    if (needsSessionCreate && !request.access.mayCreateSession) {
      const needing = request.era === 'modern' ? 'using the MCP broker' : 'starting an MCP session';
      request.telemetry?.denied(
        mcpBrokerSessionCreatePermission.name,
        JsonRpcErrorCode.InvalidRequest,
      );
      writer.refuse(
        403,
        JsonRpcErrorCode.InvalidRequest,
        `Forbidden: ${needing} needs the permission ` +
          `${mcpBrokerSessionCreatePermission.name}; ask an admin to grant it`,
        id,
      );
      return false;
    }
    const route = entry?.route?.(request.access.catalog, request.params, request);
    if (route !== undefined) {
      request.route = route;
      request.telemetry?.routed(requestTargetOf(request.method!, route.backend, route.name));
    }
    return true;
  };
}
