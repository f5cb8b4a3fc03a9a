/*
 * `subscriptions/listen` for 2026-07-28 clients (spec §9): parse the filter → admit the stream
 * under the limits → answer with an SSE stream owned by the broker. The modern request handler
 * calls it after the request metadata and the permission gate passed, like every other modern
 * method. What the stream carries, and when it ends, is ListenSubscriptions' business; this file
 * only maps the outcomes to HTTP (400 for a malformed filter, 429 at a limit, 503 while the
 * broker shuts down) and hands the response over as a ClientEventStream.
 */
import type { Request, Response } from 'express';
import type { McpBroker } from '../broker/McpBroker';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../protocol/jsonRpc';
import { advertisedListKinds } from '../protocol/listKinds';
import { honouredFilter, readSubscriptionFilter } from '../protocol/modernResults';
import { credentialKeyOf } from './principalAccess';
import { sendShuttingDown, sendTransportError } from './protocol';
import { openBrokerEventStream } from './SseClientStream';

/** A validated, permitted `subscriptions/listen` request (a ModernRequest fits). */
export interface ListenRequest {
  deps: { broker: Pick<McpBroker, 'listenStreams' | 'serverCapabilities' | 'openEventStream'> };
  /** The authenticated principal (limits are counted per principal). */
  principal: string;
  request: JsonRpcRequest;
  req: Request;
  res: Response;
}

/**
 * Answers a `subscriptions/listen` request with its stream, or with an error that says what to
 * fix. Resolves once the stream is open (it lives on after that).
 */
export async function serveListen(listen: ListenRequest): Promise<void> {
  const { principal, request, req, res } = listen;
  const broker = listen.deps.broker;
  const requested = readSubscriptionFilter(request.params);
  if ('invalid' in requested) {
    sendTransportError(res, 400, JsonRpcErrorCode.InvalidParams, requested.invalid, request.id);
    return;
  }
  // What the broker can deliver is what it advertises (tools always: it announces removals).
  const honoured = honouredFilter(requested, advertisedListKinds(broker.serverCapabilities()));
  const opened = broker.listenStreams.open({
    principal,
    viewer: credentialKeyOf(req, principal),
    subscriptionId: request.id,
    honoured,
    openStream: () => openBrokerEventStream(broker, res, {}),
  });
  if ('refused' in opened) {
    // The drain began after the modern handler's own check (nothing waits in between today).
    if (opened.refused === 'shutting-down') sendShuttingDown(res, request.id);
    else sendTransportError(res, 429, JsonRpcErrorCode.ServerError, opened.message, request.id);
    return;
  }
  // The stream may stay open for hours and nothing calls next() on it: drop Express's chain of
  // routing closures, as for the session GET streams.
  req.next = undefined;
  // The client may have gone before the stream opened: then no close event will come.
  if (res.destroyed) opened.stream.close();
}
