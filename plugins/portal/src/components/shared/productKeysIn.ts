/*
 * The API keys of one product in a key list walked page by page (the key lists filter by
 * namespace, not by product): used to show a person's own keys of a product and to count every
 * key a product's deletion would delete.
 */
import type { ApiKey, ApiProduct, ListPage } from '@devportal/plugin-portal-common';

/** The keys of `product` on every page of `pages`, a key list of the product's namespace. */
export async function productKeysIn(
  pages: AsyncIterable<ListPage<ApiKey>>,
  product: ApiProduct,
): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  for await (const page of pages) {
    keys.push(...page.items.filter(key => key.spec.apiProductRef.name === product.metadata.name));
  }
  return keys;
}
