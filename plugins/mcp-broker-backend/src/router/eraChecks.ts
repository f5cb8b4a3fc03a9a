/*
 * The first step of the admission chain (admission.ts): each protocol era's own checks, before
 * anything is looked up or a permission asked (spec §9).
 *
 * - A 2026-07-28 POST: a notification is taken (202) and dropped; the request metadata is
 *   validated (400 -32602 / -32020 / -32022 with the specification's `data`); a method the
 *   revision does not have is 404 -32601. What the `_meta` declared becomes the request's
 *   `context`.
 * - A GET or DELETE (a session's transport operation) from a 2026-07-28 client (a modern
 *   MCP-Protocol-Version header and no session id) gets what a server of that revision answers:
 *   405, POST only (`streamable-http.mdx` §Earlier Streamable HTTP Revisions).
 * - A 2025-11-25 POST has no checks of its own here.
 */
import { JsonRpcErrorCode, jsonRpcError } from '../protocol/jsonRpc';
import { ModernHeader } from '../protocol/modernEra';
import { unknownModernMethodError, validateRequestMetadata } from '../protocol/requestMetadata';
import { isModernProtocolVersion } from '../protocol/versions';
import type { McpRequest } from './mcpRequest';
import type { MethodEntry } from './methodTable';
import { headerValue } from './protocol';

/**
 * The era checks, the admission chain's first step (see the file comment): true passes the
 * request on, false means it was answered.
 */
export function eraChecks(request: McpRequest, entry: MethodEntry | undefined): boolean {
  const { kind } = request.message;
  if (kind === 'open-stream' || kind === 'end-session') {
    return !refuseModernWithoutSession(request);
  }
  return request.era === 'modern' ? admitModern(request, entry) : true;
}

/** A 2026-07-28 POST's checks; false when the request was answered. */
function admitModern(request: McpRequest, entry: MethodEntry | undefined): boolean {
  const { writer, req } = request;
  if (request.message.kind !== 'request') {
    writer.res.status(202).end();
    return false;
  }
  const { method, params, id } = request.message.message;
  const validated = validateRequestMetadata(method, params, {
    protocolVersion: headerValue(req, ModernHeader.protocolVersion),
    method: headerValue(req, ModernHeader.method),
    name: headerValue(req, ModernHeader.name),
  });
  let error = validated.ok ? undefined : validated.error;
  if (error === undefined && entry === undefined) {
    error = unknownModernMethodError(method.slice(0, 100));
  }
  if (error !== undefined) {
    writer.answer(jsonRpcError(id, error.code, error.message, error.data), error.httpStatus);
    return false;
  }
  if (validated.ok) request.context = validated.context;
  return true;
}

/** GET and DELETE belong to sessions: 405 for a 2026-07-28 client; true when it answered. */
function refuseModernWithoutSession(request: McpRequest): boolean {
  const { req, writer } = request;
  const version = headerValue(req, ModernHeader.protocolVersion)?.trim();
  if (version === undefined || !isModernProtocolVersion(version)) return false;
  if (headerValue(req, 'mcp-session-id') !== undefined) return false;
  writer.res.setHeader('Allow', 'POST');
  writer.refuse(
    405,
    JsonRpcErrorCode.InvalidRequest,
    `MCP ${version.slice(0, 40)} has no ${req.method} on this endpoint: send requests with POST ` +
      '(change notifications come over a subscriptions/listen request)',
  );
  return true;
}
