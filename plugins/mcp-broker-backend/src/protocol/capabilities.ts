/*
 * Capability shapes the broker reads and declares. The broker relays the client capabilities
 * it can carry through (elicitation, sampling and roots: requests a backend sends during a call,
 * answered by the end client on the call's stream, or through `input_required` for a 2026-07-28
 * client; and the MCP Apps extension `io.modelcontextprotocol/ui`, uiExtension.ts); everything
 * else a client declares stays between the client and the broker. Roots are
 * relayed without `listChanged`: the broker does not forward a client's
 * `notifications/roots/list_changed` to its backends.
 */
import { isPlainObject } from './jsonRpc';
import { BROKER_UI_EXTENSION, declaredUiExtension, UI_EXTENSION_ID } from './uiExtension';

/** The client capabilities the broker relays to backends. */
export interface RelayedClientCapabilities {
  elicitation?: Record<string, unknown>;
  sampling?: Record<string, unknown>;
  roots?: Record<string, unknown>;
  /** Only `io.modelcontextprotocol/ui`, as the client declared it. */
  extensions?: Record<string, Record<string, unknown>>;
}

/**
 * What the broker's own session with each backend declares: everything it can relay, so that
 * backends which tailor their tools to the client list everything the broker can serve.
 */
export const BROKER_CLIENT_CAPABILITIES: Readonly<
  Required<Omit<RelayedClientCapabilities, 'roots'>>
> = Object.freeze({
  elicitation: {},
  sampling: {},
  extensions: { [UI_EXTENSION_ID]: { ...BROKER_UI_EXTENSION } },
});

/** The relayable part of the capabilities a client declared (non-object values are dropped). */
export function relayedCapabilities(
  declared: Readonly<Record<string, unknown>>,
): RelayedClientCapabilities {
  const capabilities: RelayedClientCapabilities = {};
  if (isPlainObject(declared.elicitation)) capabilities.elicitation = declared.elicitation;
  if (isPlainObject(declared.sampling)) capabilities.sampling = declared.sampling;
  if (isPlainObject(declared.roots)) {
    const { listChanged: _notRelayed, ...roots } = declared.roots;
    capabilities.roots = roots;
  }
  const ui = declaredUiExtension(declared);
  if (ui !== undefined) capabilities.extensions = { [UI_EXTENSION_ID]: ui };
  return capabilities;
}
