import type { ObjectRef } from '@devportal/plugin-portal-common';

/** Sort order of whole lists: namespace, then name (the API server's own order). */
export function byNamespaceAndName(a: { metadata: ObjectRef }, b: { metadata: ObjectRef }): number {
  return (
    a.metadata.namespace.localeCompare(b.metadata.namespace) ||
    a.metadata.name.localeCompare(b.metadata.name)
  );
}
