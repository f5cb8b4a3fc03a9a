/*
 * The per-person rate limit (spec §12) as a step of the admission chain's `limits` stage
 * (admission.ts): a routed request of a method the method table marks `limited` (one that reaches
 * a backend on a person's behalf: `tools/call`, `prompts/get`, `resources/read`,
 * `completion/complete`), and that `mcpBroker.rateLimits.methods` keeps, in either era, is
 * counted against the limits of its principal and server (and tool, for a tool call:
 * RequestRateLimits) before anything reaches the backend. A request over a limit is refused with
 * HTTP 429, `Retry-After` (whole seconds) and the JSON-RPC error -32000 whose `data` says
 * `reason: "rate-limited"` and `retryAfterMs`; the refusal is counted (the request's telemetry,
 * with whether the admin's limit or a person's plan refused it) and audited (`rate-limited`,
 * with the wait, where the limit is configured and, for a plan, the grant). A call admitted
 * under a person's access grant carries the grant's id on to its audit event (`request.grant`). A request whose
 * limits cannot be known (the person's groups could not be read) is refused with HTTP 503,
 * `Retry-After` and `reason: "limits-unavailable"` (fail closed), audited as `failed`. An item
 * the principal may not use has no route here: its method answers it as unknown, uncounted.
 *
 * The step answers synchronously while the limiter holds leased quota (no promise per request);
 * a person's groups to read or a lease to take make it a promise.
 */
import type { BackstageCredentials, HttpAuthService } from '@backstage/backend-plugin-api';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import { retryAfterSeconds } from '../protocol/rateLimited';
import type {
  RateLimitDecision,
  RateLimitRefusal,
  RequestRateLimits,
} from '../rateLimits/RequestRateLimits';
import { clientRequestMethod } from '../protocol/mcpMethods';
import type { AdmissionStep } from './admission';
import { endpointFieldOf, type McpRequest, type McpRoute } from './mcpRequest';

/** What {@link rateLimitStep} needs. */
export interface RateLimitStepDeps {
  /** `mcpBroker.rateLimits` (only configured limits make a step). */
  rateLimits: RequestRateLimits;
  toolCallAuditor: ToolCallAuditor;
  /** Reads a request's credentials when a limit names groups (the person's groups). */
  httpAuth: HttpAuthService;
}

/** The rate-limit step of the admission chain; see the file comment. */
export function rateLimitStep(deps: RateLimitStepDeps): AdmissionStep {
  return (request, entry) => {
    const { route, method } = request;
    if (
      route === undefined ||
      request.id === null ||
      entry?.limited !== true ||
      method === undefined ||
      !deps.rateLimits.counts(method)
    ) {
      return true;
    }
    const admitted = deps.rateLimits.admit({
      principal: request.principal,
      credentials: (): Promise<BackstageCredentials> =>
        deps.httpAuth.credentials(request.req, { allow: ['user', 'service'] }),
      server: route.backend,
      ...(entry.item === 'tool' ? { tool: route.name } : {}),
    });
    return admitted instanceof Promise
      ? admitted.then(decision => apply(deps, request, route, decision))
      : apply(deps, request, route, admitted);
  };
}

/** Lets an admitted request through (noting its grant) or answers a refusal. */
function apply(
  deps: RateLimitStepDeps,
  request: McpRequest,
  route: McpRoute,
  decision: RateLimitDecision,
): true | Promise<false> {
  if (decision === undefined) return true;
  if (decision.kind === 'admitted') {
    request.grant = decision.grant;
    return true;
  }
  return refuse(deps, request, route, decision);
}

/** Counts, audits and answers a refusal; resolves false (the step answered the request). */
async function refuse(
  deps: RateLimitStepDeps,
  request: McpRequest,
  route: McpRoute,
  refusal: RateLimitRefusal,
): Promise<false> {
  const { error } = refusal;
  const limited = refusal.kind === 'limited';
  if (limited) {
    request.telemetry?.rateLimited(route.backend, error.code, error.message, refusal.limitSource);
  }
  await deps.toolCallAuditor.refused(
    {
      principal: request.principal,
      server: route.backend,
      tool: route.name,
      ...(clientRequestMethod(request.method!)?.audit === 'tool-call'
        ? {}
        : { method: request.method }),
      ...(request.telemetry?.traceId === undefined ? {} : { traceId: request.telemetry.traceId }),
      ...endpointFieldOf(request),
    },
    limited ? 'rate-limited' : 'failed',
    error.message,
    {
      retryAfterMs: refusal.retryAfterMs,
      limit: refusal.configuredAt,
      ...(refusal.grant === undefined ? {} : { grant: refusal.grant }),
    },
  );
  const { writer } = request;
  if (!writer.answered)
    writer.res.setHeader('Retry-After', retryAfterSeconds(refusal.retryAfterMs));
  writer.refuse(limited ? 429 : 503, error.code, error.message, request.id, error.data);
  return false;
}
