/*
 * The broker's events topic (contract mcp-access §2.7): every replica publishes on it when a
 * server is added, changed (owner, lists) or removed. Subscribers re-read the server over REST
 * rather than trusting the payload, so the payload names the server and nothing more.
 */
import type { McpServerKind } from './servers';

/** The topic the broker publishes server changes on. @public */
export const MCP_BROKER_EVENTS_TOPIC = 'mcp-broker';

/** Payload of topic `mcp-broker`. @public */
export interface McpBrokerEventPayload {
  type: 'server.added' | 'server.updated' | 'server.removed';
  server: { kind: McpServerKind; name: string };
}

const EVENT_TYPES = new Set(['server.added', 'server.updated', 'server.removed']);

/** True when `payload` is a well-formed {@link McpBrokerEventPayload}. @public */
export function isMcpBrokerEvent(payload: unknown): payload is McpBrokerEventPayload {
  if (typeof payload !== 'object' || payload === null) return false;
  const { type, server } = payload as Record<string, unknown>;
  if (typeof type !== 'string' || !EVENT_TYPES.has(type)) return false;
  if (typeof server !== 'object' || server === null) return false;
  const { kind, name } = server as Record<string, unknown>;
  return (kind === 'server' || kind === 'endpoint') && typeof name === 'string' && name !== '';
}
