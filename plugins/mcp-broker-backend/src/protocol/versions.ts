/*
 * The MCP protocol versions the broker speaks, and how it names itself: the one list used on both
 * sides (clients negotiating with the broker, the broker negotiating with backend MCP servers).
 * Newest first; the first is what the broker offers when it has no other preference. Only the
 * session era (2025-xx) is here today; the stateless 2026-07-28 revision joins this list when the
 * broker serves it.
 */

/** Protocol versions the broker speaks with clients and backends, newest first. */
export const PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];

/** The version the broker offers first (to backends) and answers by default (to clients). */
export const LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0];

/** True for a protocol version the broker speaks. */
export function isSupportedProtocolVersion(version: unknown): version is string {
  return typeof version === 'string' && PROTOCOL_VERSIONS.includes(version);
}

/**
 * How the broker names itself: `clientInfo` towards backends and `serverInfo` towards clients.
 */
export const BROKER_IMPLEMENTATION: Readonly<{ name: string; version: string }> = Object.freeze({
  name: 'backstage-mcp-broker',
  version: '0.1.0',
});
