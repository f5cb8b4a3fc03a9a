/*
 * A call's answer with the backend's MCP Apps UI URIs in the broker's form
 * (docs/contracts/tasks-and-apps.md §3.3): the final result of a `tools/call`, `prompts/get` or
 * `resources/read` that the tool-call machinery relays passes through
 * `resultWithBrokerUiUris` on its way to the client, whichever era either side speaks. Messages
 * before the final one (progress, requests for input, log lines) and errors pass unchanged.
 */
import { resultWithBrokerUiUris } from '../protocol/uiResourceUris';
import type { ClientResponseWriter } from '../types';

/** `writer`, with the final result's UI URIs of backend `server` rewritten. */
export function brokerUiUriWriter(
  server: string,
  writer: ClientResponseWriter,
): ClientResponseWriter {
  return {
    send: message => writer.send(message),
    finish: (message, httpStatus) =>
      writer.finish(
        'result' in message && !('method' in message)
          ? { ...message, result: resultWithBrokerUiUris(server, message.result) }
          : message,
        httpStatus,
      ),
    end: () => writer.end(),
    get answered() {
      return writer.answered;
    },
  };
}
