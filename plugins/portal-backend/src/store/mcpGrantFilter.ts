/*
 * The one rule of a grant filter that both stores check before reading: a product is named
 * within its namespace.
 */
import { InputError } from '@backstage/errors';
import type { McpGrantFilter } from './types';

/** InputError for a grant filter by product name without the namespace. */
export function assertGrantFilterNamesNamespace(filter: McpGrantFilter): void {
  if (filter.productName !== undefined && filter.namespace === undefined) {
    throw new InputError('A grant filter by product name needs the namespace');
  }
}
