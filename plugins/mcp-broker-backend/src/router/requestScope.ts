/*
 * What the endpoint keeps for one client JSON-RPC request while it is served (both eras): its
 * telemetry (span, duration, trace id), the rate-limit step of its tool call, and how it ended.
 * The endpoint opens it when the request arrives; code further on finds it with
 * requestScopeOf(res) instead of being handed it through every signature.
 *
 * How the request ended is read from the final JSON-RPC message written for it: as plain JSON
 * (`res.json`, the ClientReply) or as the last event of its stream (`answered`, called where the
 * stream is observed). A response closed without one ended `cancelled`. The first ending counts:
 * a step that refuses the request (a denial, a rate limit) ends it with its own outcome first.
 */
import type { BackstageCredentials, HttpAuthService } from '@backstage/backend-plugin-api';
import type { Request, Response } from 'express';
import { isPlainObject, type JsonRpcId } from '../protocol/jsonRpc';
import type { RateLimitRefusal, ToolCallRateLimits } from '../rateLimits/ToolCallRateLimits';
import type {
  BrokerTelemetry,
  ClientRequestStart,
  ClientRequestTelemetry,
} from '../telemetry/BrokerTelemetry';
import { resultOfFinalMessage } from '../telemetry/requestResult';
import type { Era } from '../telemetry/telemetryAttributes';
import type { ClientEventStream } from '../types';
import { observedStream } from '../audit/observedStream';

/** What the endpoint needs to open a scope. */
export interface RequestScopeDeps {
  telemetry: BrokerTelemetry;
  /** Undefined when no rate limit is configured. */
  rateLimits?: ToolCallRateLimits;
  httpAuth: HttpAuthService;
}

/** One request's scope; see the file comment. */
export interface RequestScope {
  readonly telemetry: ClientRequestTelemetry;
  /**
   * The rate-limit step of a tool call of this request's principal to `server`'s `tool`: its
   * refusal (counted; the request ends `rate-limited`), or undefined when admitted (or no limit
   * is configured).
   */
  admitToolCall(server: string, tool: string): Promise<RateLimitRefusal | undefined>;
  /** A permission refused the request (counted; the request ends `denied`). */
  denied(permission: string, code: number, server?: string): void;
  /** `message` was written to the client: when it is the request's final response, it ended. */
  answered(message: unknown): void;
}

const SCOPE = 'mcpBrokerRequestScope';

/** What the request is, for its scope. */
export interface RequestScopeStart {
  method: string;
  era: Era;
  requestId: JsonRpcId;
  principal: string;
  protocolVersion?: string;
  meta?: unknown;
}

/**
 * Opens the scope of the request `req`/`res` (its telemetry starts now) and keeps it with the
 * response; the request ends when its final message is written or the response closes.
 */
export function openRequestScope(
  deps: RequestScopeDeps,
  req: Request,
  res: Response,
  start: RequestScopeStart,
): RequestScope {
  const telemetryStart: ClientRequestStart = {
    method: start.method,
    era: start.era,
    requestId: start.requestId,
    headers: req.headers,
    ...(start.protocolVersion === undefined ? {} : { protocolVersion: start.protocolVersion }),
    ...(start.meta === undefined ? {} : { meta: start.meta }),
  };
  const telemetry = deps.telemetry.clientRequest(telemetryStart);
  const credentials = (): Promise<BackstageCredentials> =>
    deps.httpAuth.credentials(req, { allow: ['user', 'service'] });
  const scope: RequestScope = {
    telemetry,
    async admitToolCall(server, tool) {
      const refusal = await deps.rateLimits?.admit({
        principal: start.principal,
        credentials,
        server,
        tool,
      });
      if (refusal !== undefined) {
        deps.telemetry.metrics.rateLimited(server, start.era);
        telemetry.end({
          outcome: 'rate-limited',
          errorType: String(refusal.error.code),
          code: refusal.error.code,
          reason: refusal.error.message,
        });
      }
      return refusal;
    },
    denied(permission, code, server) {
      deps.telemetry.metrics.denied(telemetry.method, permission, server);
      telemetry.end({
        outcome: 'denied',
        errorType: String(code),
        code,
        reason: `${permission} denied`,
      });
    },
    answered(message) {
      if (!isPlainObject(message) || !('result' in message || 'error' in message)) return;
      if (message.id !== start.requestId && message.id !== null) return;
      telemetry.end(resultOfFinalMessage(message));
    },
  };
  res.locals[SCOPE] = scope;
  // Every plain JSON answer of this request (errors of every step included) passes here.
  const json = res.json.bind(res);
  res.json = body => {
    scope.answered(body);
    return json(body);
  };
  res.once('close', () => telemetry.end(resultOfFinalMessage(undefined)));
  return scope;
}

/** The scope of the request `res` answers, if the endpoint opened one. */
export function requestScopeOf(res: Response): RequestScope | undefined {
  return res.locals[SCOPE] as RequestScope | undefined;
}

/** `stream`, telling `scope` of every message it sends (its last one ends the request). */
export function answeredOn(stream: ClientEventStream, scope: RequestScope): ClientEventStream {
  return observedStream(stream, message => scope.answered(message));
}
