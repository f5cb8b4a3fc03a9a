/*
 * The attribute vocabulary of the broker's metrics and spans. Names come from the OpenTelemetry
 * semantic conventions for MCP where they define one (`mcp.method.name`, `gen_ai.tool.name`,
 * `gen_ai.prompt.name`, `mcp.protocol.version`, `error.type`); what the conventions do not name
 * (which configured server, the broker's outcome words, the protocol era) lives under the
 * broker's own `mcp_broker.` prefix.
 *
 * Every value put on a metric is bounded: method names outside the specification's list become
 * `_OTHER` (the conventions' word for it), tool and prompt names are only set once the name has
 * resolved to a catalog entry, server names come from configuration, and error types are
 * JSON-RPC codes of the reserved range or a few fixed words. No user ids, no arguments.
 */
import type { JsonRpcErrorObject } from '../protocol/jsonRpc';
import { mcpMethod } from '../protocol/mcpMethods';

/** Attribute keys (semantic conventions first, the broker's own after). */
export const Attr = {
  methodName: 'mcp.method.name',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
  operationName: 'gen_ai.operation.name',
  protocolVersion: 'mcp.protocol.version',
  errorType: 'error.type',
  requestId: 'jsonrpc.request.id',
  responseStatusCode: 'rpc.response.status_code',
  server: 'mcp_broker.server',
  /** The curated endpoint a request came through (spec §13); absent on the main endpoint. */
  endpoint: 'mcp_broker.endpoint',
  outcome: 'mcp_broker.outcome',
  era: 'mcp_broker.era',
  streamKind: 'mcp_broker.stream.kind',
  backendState: 'mcp_broker.backend.state',
  permission: 'mcp_broker.permission',
  cancellationSource: 'mcp_broker.cancellation.source',
  /** What refused a call: `config` (`mcpBroker.rateLimits`) or `plan` (an access grant's). */
  limitSource: 'mcp_broker.limit_source',
  /** How an MCP App's call by its server's own tool name was resolved (contract tasks-and-apps §3.6). */
  appCallResolution: 'mcp_broker.app_call.resolution',
  /** The era of the backend a task lives at (contract tasks-and-apps §2.14). */
  backendEra: 'mcp_broker.backend.era',
  /** The terminal status a task ended with. */
  taskStatus: 'mcp_broker.task.status',
} as const;

/** How an app's call by a tool's own name was resolved: by its hint, by uniqueness, or not. */
export type AppCallResolution = 'hint' | 'unique' | 'ambiguous' | 'unknown';

/** The protocol era of a client request or of a backend (2025-xx sessions, or 2026-07-28). */
export type Era = 'legacy' | 'modern';

/**
 * How a request ended, as metrics, spans and the audit trail name it:
 * - `succeeded`: a result (a tool result with `isError: true` is `failed`);
 * - `failed`: a JSON-RPC error, a tool error, or no answer from the backend;
 * - `denied`: refused by a permission (or answered as unknown because of one);
 * - `rate-limited`: refused by `mcpBroker.rateLimits`;
 * - `cancelled`: the client went away or cancelled before the answer.
 */
export type Outcome = 'succeeded' | 'failed' | 'denied' | 'rate-limited' | 'cancelled';

/** The value of {@link Attr.errorType} when a tool answered with `isError: true`. */
export const TOOL_ERROR_TYPE = 'tool_error';
/** The value of {@link Attr.errorType} when no answer came (cancelled, client gone). */
export const CANCELLED_ERROR_TYPE = 'cancelled';
/** The conventions' word for a value outside the bounded set. */
export const OTHER_VALUE = '_OTHER';

/**
 * `method` when the method table knows it (the specification's methods of both eras, either
 * direction), else `_OTHER` (a client may send anything): the bounded set of
 * {@link Attr.methodName}.
 */
export function boundedMethod(method: string): string {
  return mcpMethod(method) === undefined ? OTHER_VALUE : method;
}

/** JSON-RPC reserves -32768 … -32000 for the protocol and implementation-defined errors. */
const RESERVED_CODES = { lowest: -32768, highest: -32000 } as const;

/**
 * The {@link Attr.errorType} of a JSON-RPC error: its code as text when it is one of the reserved
 * range (a bounded set), else `_OTHER` (a backend may answer with any integer).
 */
export function errorTypeOfCode(code: number): string {
  return Number.isInteger(code) && code >= RESERVED_CODES.lowest && code <= RESERVED_CODES.highest
    ? String(code)
    : OTHER_VALUE;
}

/** The {@link Attr.errorType} of a JSON-RPC error object. */
export function errorTypeOf(error: JsonRpcErrorObject): string {
  return errorTypeOfCode(error.code);
}
