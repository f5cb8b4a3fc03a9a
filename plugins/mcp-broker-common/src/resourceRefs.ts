/*
 * Resource refs of the broker's items: `<server>:<own name>`, where the server is the
 * configured server name (`[a-z0-9-]`, so it never holds a colon) and the own name is the
 * backend's unprefixed tool or prompt name, or the resource URI / URI template. Splitting at
 * the first colon therefore recovers both parts, whatever the name or URI contains.
 */

/**
 * One item of a backend MCP server, as a resource ref names it.
 *
 * @public
 */
export interface McpBrokerItemRef {
  /** The configured server name. */
  server: string;
  /** The backend's own (unprefixed) tool or prompt name, or the resource URI or URI template. */
  name: string;
}

/**
 * The resource ref of an item: `server:name` (the server name, a colon, the own name or URI).
 *
 * @public
 */
export function stringifyMcpBrokerResourceRef(ref: McpBrokerItemRef): string {
  return `${ref.server}:${ref.name}`;
}

/**
 * Parses a resource ref made by {@link stringifyMcpBrokerResourceRef}; undefined when it has
 * no colon or an empty server part.
 *
 * @public
 */
export function parseMcpBrokerResourceRef(ref: string): McpBrokerItemRef | undefined {
  const colon = ref.indexOf(':');
  if (colon <= 0) return undefined;
  return { server: ref.slice(0, colon), name: ref.slice(colon + 1) };
}
