/* Which kinds of a backend's lists differ between two listings (what clients are told of). */
import type { ListKind } from '../protocol/listKinds';
import type { BackendLists } from './backendConnectionTypes';

/** The kinds whose items differ between `previous` and `next` (templates count as resources). */
export function changedListKinds(previous: BackendLists, next: BackendLists): Set<ListKind> {
  const changed = new Set<ListKind>();
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(previous.tools, next.tools)) changed.add('tools');
  if (
    !same(previous.resources, next.resources) ||
    !same(previous.resourceTemplates, next.resourceTemplates)
  ) {
    changed.add('resources');
  }
  if (!same(previous.prompts, next.prompts)) changed.add('prompts');
  return changed;
}
