/** The kinds of list a backend can announce changes of. */
export type ListKind = 'tools' | 'resources' | 'prompts' | 'roots';

/** Every list kind, in a fixed order. */
export const LIST_KINDS: readonly ListKind[] = ['tools', 'resources', 'prompts', 'roots'];

/** The list_changed notification method of each kind. */
export const LIST_CHANGED_METHOD: Readonly<Record<ListKind, string>> = {
  tools: 'notifications/tools/list_changed',
  resources: 'notifications/resources/list_changed',
  prompts: 'notifications/prompts/list_changed',
  roots: 'notifications/roots/list_changed',
};

/** The kind of a list_changed method, or undefined for any other method. */
export function listKindOfMethod(method: string): ListKind | undefined {
  return (Object.keys(LIST_CHANGED_METHOD) as ListKind[]).find(
    k => LIST_CHANGED_METHOD[k] === method,
  );
}

/** The kinds whose `listChanged` a backend advertised in its capabilities. */
export function advertisedListKinds(capabilities: Record<string, unknown>): Set<ListKind> {
  const kinds = new Set<ListKind>();
  for (const kind of LIST_KINDS) {
    const capability = capabilities[kind];
    if (
      typeof capability === 'object' &&
      capability !== null &&
      (capability as { listChanged?: unknown }).listChanged === true
    ) {
      kinds.add(kind);
    }
  }
  return kinds;
}
