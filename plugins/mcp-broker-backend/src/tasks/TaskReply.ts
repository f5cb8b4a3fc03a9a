/*
 * What a task relay answers (LegacyTaskRelay, ModernTaskRelay): a result for the client, or a
 * JSON-RPC error with the HTTP status it goes with. The router writes it; the relays know no HTTP.
 */
import type { JsonRpcErrorObject } from '../protocol/jsonRpc';
import type { TaskError } from './taskErrors';

/** What an operation answers: a result, or an error with its HTTP status. */
export type TaskReply =
  | { readonly result: Record<string, unknown> }
  | { readonly error: JsonRpcErrorObject; readonly httpStatus: number };

/** A {@link TaskError} as a reply. */
export function taskRefusal(error: TaskError): TaskReply {
  return { error: error.error, httpStatus: error.httpStatus };
}
