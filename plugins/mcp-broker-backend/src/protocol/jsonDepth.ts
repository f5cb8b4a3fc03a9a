/*
 * How deeply a client's JSON nests, measured without recursion.
 *
 * `JSON.parse` reads any depth, but much of what the broker does with a message afterwards
 * (`JSON.stringify` towards a backend, cloning, walking for ids and prefixes) recurses once per
 * level and overflows the stack a few thousand levels down — where the error would then look
 * like the backend's fault. So every client message is measured once, right after parsing, with
 * an explicit stack, and one nested deeper than {@link MAX_CLIENT_JSON_DEPTH} is refused as the
 * client's mistake before anything else walks it.
 */

/**
 * Deepest nesting of objects and arrays accepted in a member of a client message (`params`,
 * `result`, `error`): `{}` is one level, `{"a": []}` two. Real MCP traffic stays far below it;
 * every recursive walk in the broker and in Node is safe far above it.
 */
export const MAX_CLIENT_JSON_DEPTH = 64;

/**
 * The name of the first top-level member of `message` that nests deeper than `maxDepth` levels,
 * or undefined when none does. Stops at the first level beyond the limit.
 */
export function memberNestedTooDeep(
  message: Record<string, unknown>,
  maxDepth = MAX_CLIENT_JSON_DEPTH,
): string | undefined {
  for (const [name, value] of Object.entries(message)) {
    if (nestsDeeperThan(value, maxDepth)) return name;
  }
  return undefined;
}

/** True when `value` has objects or arrays nested more than `maxDepth` levels deep. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null)
        pending.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}
