/*
 * Whether an input request of a 2026-07-28 backend (an `inputRequests` entry) may be put to a
 * client as a real request: its method is one a client answers (`elicitation/create`,
 * `sampling/createMessage`, `roots/list`) and the client declared the capability it needs
 * (docs/contracts/tasks-and-apps.md §2.12.3: an input the client cannot answer is not asked).
 */
import { isPlainObject } from './jsonRpc';
import { missingClientCapabilities, requiredCapabilitiesForInputRequest } from './requestMetadata';

/** True when `request` may be asked of a client that declared `capabilities`. */
export function isAskableInputRequest(
  request: unknown,
  capabilities: Readonly<Record<string, unknown>>,
): request is { method: string; params?: Record<string, unknown> } {
  if (!isPlainObject(request) || typeof request.method !== 'string') return false;
  const params = isPlainObject(request.params) ? request.params : undefined;
  const required = requiredCapabilitiesForInputRequest(request.method, params);
  return required !== undefined && missingClientCapabilities(required, capabilities) === undefined;
}
