/*
 * The precedence rule shared by the broker's two composed sets — servers (ServerSetComposer) and
 * curated endpoints (EndpointSetComposer): entries an admin wrote in config come first, in config
 * order, then the entries from Kubernetes whose name is still free. A Kubernetes entry whose name
 * config already has is left out with one warning (per name, for the composer's lifetime):
 * config wins, nothing is silently replaced.
 */

/** Config entries, then Kubernetes entries with a free name; see the file comment. */
export function composeConfigFirst<T extends { readonly name: string }>(
  fromConfig: readonly T[],
  fromKubernetes: readonly T[],
  /** Names already warned about (kept by the composer between calls). */
  warned: Set<string>,
  /** Says why `entry` was left out (called once per name). */
  warn: (entry: T) => void,
): T[] {
  const names = new Set(fromConfig.map(entry => entry.name));
  const result = [...fromConfig];
  for (const entry of fromKubernetes) {
    if (names.has(entry.name)) {
      if (!warned.has(entry.name)) {
        warned.add(entry.name);
        warn(entry);
      }
      continue;
    }
    names.add(entry.name);
    result.push(entry);
  }
  return result;
}
