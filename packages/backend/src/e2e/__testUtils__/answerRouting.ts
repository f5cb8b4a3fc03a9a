/*
 * A `fetch` for the official MCP clients of both eras that sends a client's answers to one
 * replica and everything else to another, as a load balancer without stickiness may: a legacy
 * client's answers are JSON-RPC responses POSTed to the broker (an elicitation answered), a
 * 2026-07-28 client's answers are the retry of an `input_required` request (a request whose
 * params carry `inputResponses` or `requestState`). Every answer is recorded with the base URL
 * it went to and the status it got, so a test can prove where it went.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** One answer a client sent: its JSON-RPC body, the base URL it went to, the HTTP status. */
export interface RoutedAnswer {
  body: Record<string, any>;
  baseUrl: string;
  status: number;
}

/** Whether a JSON-RPC body is an answer: a response, or a request retried with answers. */
function isAnswer(body: unknown): body is Record<string, any> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as Record<string, any>;
  if (!('method' in message)) return 'result' in message || 'error' in message;
  const params = message.params as Record<string, unknown> | undefined;
  return params?.inputResponses !== undefined || params?.requestState !== undefined;
}

/**
 * A fetch that sends answers to `answersTo` and every other request to `requestsTo` (base URLs:
 * the request's path and query are kept), recording each answer in `answers` once its response
 * arrived. A legacy answer's response (202) travels apart from the call's result, which may
 * reach the client first: wait for the record, do not expect it with the result.
 */
export function answerRoutingFetch(
  requestsTo: string,
  answersTo: string,
  answers: RoutedAnswer[],
  base: FetchLike = fetch,
): FetchLike {
  return async (input, init) => {
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    const answering = isAnswer(body);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const baseUrl = answering ? answersTo : requestsTo;
    const response = await base(`${baseUrl}${url.pathname}${url.search}`, init);
    if (answering) answers.push({ body, baseUrl, status: response.status });
    return response;
  };
}
