/*
 * The MCP protocol versions the broker speaks, and how it names itself: the one list used on both
 * sides (clients negotiating with the broker, the broker negotiating with backend MCP servers).
 * Newest first; the first is what the broker offers when it has no other preference.
 * `PROTOCOL_VERSIONS` is the session era (the `initialize` handshake, 2025-xx): what legacy
 * clients are offered and legacy backends are asked for. The stateless revisions (2026-07-28 and
 * later, per-request `_meta`) are listed apart in `MODERN_PROTOCOL_VERSIONS`, so adding them
 * changes nothing a legacy client sees.
 */

/** Session-era protocol versions the broker speaks with clients and backends, newest first. */
export const PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];

/** The first stateless (per-request `_meta`) protocol revision. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Stateless-era protocol versions the broker speaks, newest first. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION];

/**
 * Every version the broker speaks, stateless ones first: what `server/discover` lists and what
 * an unsupported-version error (-32022) offers.
 */
export const ALL_PROTOCOL_VERSIONS: readonly string[] = [
  ...MODERN_PROTOCOL_VERSIONS,
  ...PROTOCOL_VERSIONS,
];

/**
 * True for a version string of the stateless era (2026-07-28 or later, supported or not): the
 * specification's revisions are dates, so the era is a string comparison (the SDK does the same).
 */
export function isModernProtocolVersion(version: string): boolean {
  return version >= MODERN_PROTOCOL_VERSION;
}

/** True for a stateless-era version the broker speaks. */
export function isSupportedModernProtocolVersion(version: unknown): version is string {
  return typeof version === 'string' && MODERN_PROTOCOL_VERSIONS.includes(version);
}

/** The version the broker offers first (to backends) and answers by default (to clients). */
export const LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0];

/** True for a session-era protocol version the broker speaks (unchanged: legacy only). */
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

/** What the broker tells clients about itself (`initialize` and `server/discover`). */
export const BROKER_INSTRUCTIONS =
  "Tools and prompts of several MCP servers; names carry each server's prefix.";
