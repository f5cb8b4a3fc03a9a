/*
 * The methods the tool-call machinery serves (the ToolCallHandler, calls/), for both eras:
 * `tools/call`, and `prompts/get` / `resources/read` whose item lives on a 2026-07-28 backend
 * (such a backend may answer them with `input_required`, which needs the tool calls' rounds).
 *
 * A call is routed within the principal's permitted catalog: a denied tool answers exactly like
 * an unknown one (-32602), and only the audit trail tells them apart. Every `tools/call` that
 * reaches a backend is one audit event (ToolCallAuditor), its outcome read from the final
 * response. The call ends when the client's connection closes (a 2026-07-28 client's way of
 * cancelling), its session ends, or the broker stops (callEndSignal).
 *
 * What differs per era is who calls (a session, or a stateless caller whose backend sessions are
 * pooled per principal and relayed capabilities: {@link modernCallerOf}), which handler entry
 * takes the call, and, for a 2026-07-28 `tools/call`, the `Mcp-Param-*` headers checked against
 * the arguments first (400 -32020 on a mismatch).
 */
import { createHash } from 'node:crypto';
import { mcpBrokerToolUsePermission } from '@devportal/plugin-mcp-broker-common';
import type { ToolCallAuditor, ToolCallAuditRecord } from '../audit/ToolCallAuditor';
import type { McpBroker } from '../broker/McpBroker';
import { canonicalJson } from '../inputRequests/RequestStateSealer';
import { relayedCapabilities } from '../protocol/capabilities';
import {
  JsonRpcErrorCode,
  jsonRpcError,
  type JsonRpcId,
  type JsonRpcRequest,
} from '../protocol/jsonRpc';
import { clientRequestMethod } from '../protocol/mcpMethods';
import { checkParamHeaders } from '../protocol/paramHeaders';
import { completeResult, cacheableResult } from '../protocol/modernResults';
import type { ModernRequestContext } from '../protocol/requestMetadata';
import type { BrokerBackend, ModernCaller, ToolCallContext } from '../types';
import { callEndSignal } from './callEndSignal';
import type { ModernShape } from './catalogMethods';
import {
  endpointFieldOf,
  hiddenToolRoute,
  permittedCatalogOf,
  type McpRequest,
  type McpRoute,
} from './mcpRequest';
import { declaresUi } from './declaresUi';
import { headerValue } from './protocol';
import { authOf } from '../identity/BackendCredentialProvider';
import { CredentialStep, type StepCaller } from './credentialStep';
import { brokerUiUriWriter } from './brokerUiUriWriter';
import {
  auditedTaskCall,
  createTask,
  isTaskCall,
  modernTaskCreationOf,
  refusedLegacyTaskAtBound,
} from './taskMethods';
import { legacyTaskCallOf, relayLegacyTaskCall } from './legacyTaskCalls';
import {
  ambiguityOf,
  ambiguousAppTool,
  appOriginOf,
  resolveAppTool,
  withoutAppOriginHint,
} from './appCallRoutes';

/** The audit `reason` of a call of a tool its curated endpoint does not show (contract §1). */
export const NOT_IN_ENDPOINT = 'not-in-endpoint';

/** `resources/read` results of a 2026-07-28 backend, as the catalog methods shape them. */
const RESOURCE_READ_SHAPE: ModernShape = result =>
  cacheableResult(result, { ttlMs: 0, cacheScope: 'private' });

/**
 * `tools/call` of either era: resolves the prefixed name within the permitted catalog (the
 * request's route), audits it, and hands it to the ToolCallHandler.
 */
export function callTool(
  broker: McpBroker,
  auditor: ToolCallAuditor,
  credentialStep?: CredentialStep,
) {
  return async (request: McpRequest): Promise<void> => {
    const { params, route, principal, writer, telemetry } = request;
    const traceId = telemetry?.traceId;
    const id = request.id!;
    // The table's params rule holds (checked before any handler runs).
    const name = params.name as string;
    const backend = route && broker.server(route.backend);
    const appOnlyRefusal = route && appOnlyRefusalOf(request, name, route.backend);
    if (route !== undefined && appOnlyRefusal !== undefined) {
      // An app-only tool is not offered to a plain agent, nor to another server's app
      // (contract §3.5): unknown to them.
      await auditor.refused(
        {
          principal,
          server: route.backend,
          tool: route.name,
          ...(traceId === undefined ? {} : { traceId }),
          ...endpointFieldOf(request),
        },
        'failed',
        appOnlyRefusal,
      );
      writer.answer(unknownTool(id, name));
      return;
    }
    const ambiguity = route === undefined ? appToolAmbiguity(request, name) : undefined;
    if (route?.appCall !== undefined) telemetry?.appCall(route.appCall.resolution, route.backend);
    else if (ambiguity !== undefined) telemetry?.appCall('ambiguous');
    else if (route === undefined && declaresUi(request)) telemetry?.appCall('unknown');
    if (ambiguity !== undefined) {
      // An app's call that several servers' tools could serve: never guessed (contract §3.6).
      await auditor.refused(
        {
          principal,
          server: undefined,
          tool: name,
          ...(traceId === undefined ? {} : { traceId }),
          ...endpointFieldOf(request),
        },
        'failed',
        'ambiguous app tool name',
        { candidates: [...ambiguity.candidates] },
      );
      const error = ambiguousAppTool(name, ambiguity);
      writer.answer(jsonRpcError(id, error.code, error.message, error.data));
      return;
    }
    if (!route || !backend) {
      // Denied, outside the endpoint and unknown answer alike; only the audit trail tells them
      // apart. Outside the endpoint is said first: the person's policy is not the reason then.
      const catalog = broker.catalog();
      const hidden = hiddenToolRoute(catalog, name);
      const outside =
        hidden !== undefined &&
        request.endpoint !== undefined &&
        request.endpoint.selectionOf(catalog).routeTool(name) === undefined;
      if (hidden && !outside) {
        telemetry?.denied(
          mcpBrokerToolUsePermission.name,
          JsonRpcErrorCode.InvalidParams,
          hidden.backend,
        );
      }
      await auditor.refused(
        {
          principal,
          server: hidden?.backend,
          tool: hidden?.name ?? name,
          ...(traceId === undefined ? {} : { traceId }),
          ...endpointFieldOf(request),
        },
        hidden ? 'denied' : 'failed',
        refusalReason(hidden !== undefined, outside),
        outside ? { reason: NOT_IN_ENDPOINT } : {},
      );
      writer.answer(unknownTool(id, name));
      return;
    }
    if (request.era === 'modern') {
      // The specification's server rule, done by the broker because it reads the body: the
      // headers must agree with the arguments the tool's x-mcp-header annotations name.
      const mismatch =
        route.paramHeaders === undefined
          ? undefined
          : checkParamHeaders(route.paramHeaders, params.arguments, header =>
              headerValue(request.req, header),
            );
      if (mismatch !== undefined) {
        writer.refuse(mismatch.httpStatus, mismatch.code, mismatch.message, id, mismatch.data);
        return;
      }
    }
    const legacyTaskCall = legacyTaskCallOf(broker, request, route, backend);
    if (legacyTaskCall.kind === 'refused') {
      // A 2025-11-25 tool that runs only as a task, called without the tasks extension (§2.12.4).
      await auditor.refused(
        auditedTaskCall(request, route),
        'failed',
        legacyTaskCall.error.message,
      );
      const { error } = legacyTaskCall;
      writer.refuse(legacyTaskCall.httpStatus, error.code, error.message, id, error.data);
      return;
    }
    if (await refusedLegacyTaskAtBound(broker, request, route, backend)) return;
    if (isTaskCall(broker, request, backend)) {
      // A 2025-11-25 task-augmented call: relayed as a task (contract tasks-and-apps §2.7).
      await createTask(broker, auditor, request, route, auditedTaskCall(request, route));
      return;
    }
    const audit = auditor.begin(
      {
        principal,
        server: backend.name,
        tool: route.name,
        credentialMode: authOf(backend).mode,
        ...(traceId === undefined ? {} : { traceId }),
        ...(request.grant === undefined ? {} : { grant: request.grant }),
        ...endpointFieldOf(request),
        ...(route.appCall === undefined
          ? {}
          : {
              nameResolution: route.appCall.resolution,
              ...(route.appCall.origin === undefined ? {} : { appOrigin: route.appCall.origin }),
            }),
      },
      id,
    );
    try {
      // A 2026-07-28 call relayed as a 2025-11-25 task (§2.12.4), unless it is to run plain.
      if (
        legacyTaskCall.kind === 'task' &&
        (await relayLegacyTaskCall(broker, request, route, audit))
      ) {
        return;
      }
      await handOff(broker, request, route, credentialStep, audit);
    } finally {
      await audit.finish();
    }
  };
}

/** Why a call of a tool the caller cannot see was refused, as the audit event says. */
function refusalReason(exists: boolean, outsideEndpoint: boolean): string {
  if (outsideEndpoint) return `${NOT_IN_ENDPOINT}: the tool is not in this curated endpoint`;
  return exists ? 'mcp-broker.tool.use denied' : 'unknown tool';
}

/**
 * Why a routed call of an app-only tool is refused, if it is: its client did not declare
 * `io.modelcontextprotocol/ui`, or its origin hint names another server (contract §3.5).
 */
function appOnlyRefusalOf(request: McpRequest, name: string, server: string): string | undefined {
  const catalog = permittedCatalogOf(request);
  if (catalog.routeTool(name)?.appOnly !== true) return undefined;
  if (!declaresUi(request)) {
    return 'app-only tool called by a client that did not declare io.modelcontextprotocol/ui';
  }
  const origin = appOriginOf(catalog, request.params);
  return origin !== undefined && origin !== server
    ? `app-only tool called by an app of MCP server "${origin}"`
    : undefined;
}

/** The tools an unknown name could mean as an app's call, when there are several (§3.6). */
function appToolAmbiguity(request: McpRequest, name: string) {
  if (!declaresUi(request)) return undefined;
  return ambiguityOf(resolveAppTool(permittedCatalogOf(request), name, request.params));
}

/** The answer to a call of a tool the caller cannot see (unknown, denied or app-only alike). */
function unknownTool(id: JsonRpcId, name: string) {
  return jsonRpcError(id, JsonRpcErrorCode.InvalidParams, `unknown tool "${name.slice(0, 200)}"`);
}

/**
 * `prompts/get` or `resources/read` whose item belongs to a 2026-07-28 backend: handed to the
 * ToolCallHandler like a tool call (see the file comment); anything else goes to `otherwise`
 * (over the broker's own connection, catalogMethods.ts). A 2026-07-28 request carrying
 * `requestState` is handed over whatever the backend's era: its state is opened (and refused
 * with 400 when it is not one of ours for this request) rather than passed to a 2025 backend.
 */
export function viaInputCapableBackend(
  broker: McpBroker,
  otherwise: (request: McpRequest) => Promise<void>,
  credentialStep?: CredentialStep,
) {
  return handOffWhen(broker, otherwise, credentialStep, (request, backend) => {
    const retry = request.era === 'modern' && request.params.requestState !== undefined;
    // A person's credential (spec §11) is presented on the person's own path, whatever the era.
    const personal = credentialStep !== undefined && CredentialStep.isPersonal(backend);
    return retry || personal || broker.connection(backend.name)?.era === 'modern';
  });
}

/**
 * `completion/complete` to a server that acts with each person's identity (spec §11): on the
 * person's own path, with their credential; to any other server, `otherwise` (over the broker's
 * own connection).
 */
export function viaPersonalCredential(
  broker: McpBroker,
  otherwise: (request: McpRequest) => Promise<void>,
  credentialStep?: CredentialStep,
) {
  return handOffWhen(
    broker,
    otherwise,
    credentialStep,
    (_request, backend) => credentialStep !== undefined && CredentialStep.isPersonal(backend),
  );
}

/**
 * A method handler that hands a routed request whose backend is configured, and that `handsOff`
 * accepts, to the ToolCallHandler ({@link handOff}); any other request goes to `otherwise`.
 */
function handOffWhen(
  broker: McpBroker,
  otherwise: (request: McpRequest) => Promise<void>,
  credentialStep: CredentialStep | undefined,
  handsOff: (request: McpRequest, backend: BrokerBackend) => boolean,
) {
  return async (request: McpRequest): Promise<void> => {
    const { route } = request;
    const backend = route && broker.server(route.backend);
    if (route === undefined || backend === undefined || !handsOff(request, backend)) {
      await otherwise(request);
      return;
    }
    await handOff(broker, request, route, credentialStep);
  };
}

/**
 * Hands a routed request to the ToolCallHandler entry of its era, with the item's own name in
 * its params, an answer the handler writes to, and an end signal: the client's connection
 * closing, its session ending, or the broker stopping.
 */
async function handOff(
  broker: McpBroker,
  request: McpRequest,
  route: McpRoute,
  credentialStep?: CredentialStep,
  audit?: ToolCallAuditRecord,
): Promise<void> {
  const backend = broker.server(route.backend)!;
  const { method, params, session, writer } = request;
  const routed: JsonRpcRequest = {
    jsonrpc: '2.0',
    id: request.id!,
    method: method!,
    params: routedParams(method!, params, route, name => broker.server(name) !== undefined),
  };
  writer.holdForCall();
  const ended = callEndSignal(writer.res, [
    ...(session === undefined ? [] : [session.ended.signal]),
    broker.shutdownSignal,
  ]);
  const response = brokerUiUriWriter(route.backend, audit?.observe(writer) ?? writer);
  try {
    // The person's credential for this backend (spec §11), or the step answers the client.
    const prepared = credentialStep
      ? await credentialStep.prepare(
          request.req,
          stepCallerOf(request),
          backend,
          routed,
          response,
          ended.signal,
        )
      : { request: routed, guard: (w: typeof response) => w };
    if (prepared === undefined) return;
    const taskCreation = modernTaskCreationOf(broker, request, route, backend);
    const call: Omit<ToolCallContext, 'clientSession'> = {
      backend,
      request: prepared.request,
      response: prepared.guard(response),
      signal: ended.signal,
      ...(request.telemetry === undefined ? {} : { telemetry: request.telemetry }),
      ...('personalHeaders' in prepared && prepared.personalHeaders !== undefined
        ? { personalHeaders: prepared.personalHeaders }
        : {}),
      ...(taskCreation === undefined ? {} : { taskCreation }),
    };
    if (session !== undefined) {
      await broker.toolCalls.handleToolCall({ ...call, clientSession: session });
    } else {
      await broker.toolCalls.handleModernToolCall({
        ...call,
        caller: {
          ...modernCallerOf(request.principal, request.context!),
          ...endpointFieldOf(request),
        },
        // A tool result is shaped by the call machinery; other results here.
        ...(clientRequestMethod(method!)?.toolResult
          ? {}
          : { shapeResult: method === 'resources/read' ? RESOURCE_READ_SHAPE : completeResult }),
      });
    }
  } finally {
    ended.release();
  }
}

/**
 * The params sent to the backend: the item's own name in place of the prefixed one (the
 * backend's URI in place of a broker UI URI).
 */
function routedParams(
  method: string,
  params: Record<string, unknown>,
  route: McpRoute,
  isServer: (name: string) => boolean,
): Record<string, unknown> {
  if (method === 'resources/read') {
    return { ...withoutAppOriginHint(params, isServer), uri: route.name };
  }
  if (method === 'completion/complete') {
    const ref = params.ref as Record<string, unknown> | undefined;
    if (ref?.type === 'ref/prompt') return { ...params, ref: { ...ref, name: route.name } };
    return ref?.type === 'ref/resource' ? { ...params, ref: { ...ref, uri: route.name } } : params;
  }
  // A tools/call: an app's origin hint holds a broker UI URI, which the backend does not know;
  // a `task` it does not relay as a task is removed (the call runs as a plain call).
  const { task: _notRelayed, ...plain } = withoutAppOriginHint(params, isServer);
  return { ...plain, name: route.name };
}

/** Who makes `request`, as the credential step needs to know. */
function stepCallerOf(request: McpRequest): StepCaller {
  return request.session === undefined
    ? {
        principal: request.principal,
        era: 'modern',
        clientCapabilities: request.context?.clientCapabilities ?? {},
      }
    : {
        principal: request.principal,
        era: 'legacy',
        clientSessionId: request.session.id,
        clientCapabilities: request.session.clientCapabilities,
      };
}

/**
 * The stateless caller of a 2026-07-28 call. Its pool key binds the principal and the
 * capabilities the broker relays (canonical JSON, so key order does not matter): calls that may
 * share a backend session are exactly those the backend may treat alike.
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
