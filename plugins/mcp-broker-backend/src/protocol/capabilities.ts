/*
 * Capability shapes the broker reads and declares. The broker relays the client capabilities
 * it can carry through (elicitation and sampling, answered by the end client on the call's
 * stream); everything else a client declares stays between the client and the broker.
 */
import { isPlainObject } from './jsonRpc';

/** The client capabilities the broker relays to backends. */
export interface RelayedClientCapabilities {
  elicitation?: Record<string, unknown>;
  sampling?: Record<string, unknown>;
}

/**
 * What the broker's own session with each backend declares: everything it can relay, so that
 * backends which tailor their tools to the client list everything the broker can serve.
 */
export const BROKER_CLIENT_CAPABILITIES: Readonly<Required<RelayedClientCapabilities>> =
  Object.freeze({ elicitation: {}, sampling: {} });

/** The relayable part of the capabilities a client declared (non-object values are dropped). */
export function relayedCapabilities(
  declared: Readonly<Record<string, unknown>>,
): RelayedClientCapabilities {
  const capabilities: RelayedClientCapabilities = {};
  if (isPlainObject(declared.elicitation)) capabilities.elicitation = declared.elicitation;
  if (isPlainObject(declared.sampling)) capabilities.sampling = declared.sampling;
  return capabilities;
}
