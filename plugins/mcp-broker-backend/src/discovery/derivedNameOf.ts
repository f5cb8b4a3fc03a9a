/*
 * The broker's name of a namespaced Kubernetes resource — a registration's server, a virtual
 * server's endpoint: `<namespace>-<name>`, lower-cased, every other character `-`, so it is a
 * valid server and endpoint name (the endpoint's length limit is its caller's to check).
 */

/** `<namespace>-<name>` in `[a-z0-9-]`. */
export function derivedNameOf(namespace: string, name: string): string {
  return `${namespace}-${name}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
}
