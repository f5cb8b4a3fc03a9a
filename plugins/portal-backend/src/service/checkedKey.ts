/*
 * How both business services read the key a call acts on: the key and its product's
 * owner, always in two store reads (for a missing key the second reads the product named
 * like the key, so that "missing" costs what "hidden" costs), then the caller's `check`.
 */
import type { ApiKey, ObjectRef } from '@devportal/plugin-portal-common';
import type { PortalStore } from '../store/types';
import type { KeyCheck, KeyRecord } from './portalService';
import { keyNotFound, productOwnerOf, productRefOfKey } from './records';

/** The key a call acts on, after its check; 404 when it does not exist. */
export async function checkedKey(
  store: PortalStore,
  ref: ObjectRef,
  check: KeyCheck,
): Promise<ApiKey> {
  const key = await store.getKey(ref);
  const product = await store.getProduct(key ? productRefOfKey(key) : ref);
  const record: KeyRecord = { key, productOwnerRef: product && productOwnerOf(product) };
  await check(record, ref);
  if (!record.key) throw keyNotFound(ref);
  return record.key;
}
