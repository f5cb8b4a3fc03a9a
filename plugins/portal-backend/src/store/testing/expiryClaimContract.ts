/*
 * The part of the PortalStore contract about expiry announcements
 * (`claimExpiryAnnouncements`, contract mcp-access §3.5, §4.5), run inside
 * runPortalStoreContract against every store: which keys are due, a claim is once for ever,
 * and two concurrent claimers share the due keys without overlap.
 */
import { OWNER_ANNOTATION, type ApiKey } from '@devportal/plugin-portal-common';
import type { NewApiKey, PortalStore } from '../types';

/** Generous: PostgreSQL and the fake API server run concurrent claims. */
const TEST_TIMEOUT_MS = 30_000;
const NOW = new Date('2030-06-01T12:00:00Z');
const PAST = '2030-06-01T11:59:00Z';
const FUTURE = '2030-06-01T12:01:00Z';

function names(keys: ApiKey[]): string[] {
  return keys.map(key => key.metadata.name).sort();
}

/** Defines the expiry-claim tests over the store that `storeOf` gives for each test. */
// eslint-disable-next-line jest/no-export -- part of the shared store contract
export function describeExpiryClaimContract(storeOf: () => PortalStore): void {
  describe('expiry announcements', () => {
    let store: PortalStore;
    let counter = 0;

    beforeEach(async () => {
      store = storeOf();
      await store.createProduct({
        namespace: 'toystore',
        name: 'toys',
        annotations: { [OWNER_ANNOTATION]: 'group:default/payments-team' },
        spec: {
          displayName: 'Toy store',
          targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
          approvalMode: 'manual',
          publishStatus: 'Published',
        },
      });
    }, TEST_TIMEOUT_MS);

    /** A key of a requester of its own, Approved unless `pending`, expiring at `expiresAt`. */
    async function key(expiresAt: string | undefined, pending = false): Promise<ApiKey> {
      counter += 1;
      const request: NewApiKey = {
        namespace: 'toystore',
        spec: {
          apiProductRef: { name: 'toys' },
          planTier: 'gold',
          requestedBy: { userId: `user:default/expiry-${counter}` },
          ...(expiresAt !== undefined && { expiresAt }),
        },
        ...(!pending && { approval: { reviewedBy: 'user:default/bob', secret: `s-${counter}` } }),
      };
      return store.createKey(request);
    }

    it(
      'claims the Approved keys whose expiresAt has passed, whatever its offset, and no others',
      async () => {
        const due = [
          await key(PAST),
          await key(NOW.toISOString()),
          // 12:30 at +02:00 is 10:30 UTC: due, although its text sorts after NOW's.
          await key('2030-06-01T12:30:00+02:00'),
        ];
        await key(FUTURE);
        // 10:30 at -02:00 is 12:30 UTC: not due, although its text sorts before NOW's.
        await key('2030-06-01T10:30:00-02:00');
        await key(undefined);
        await key(PAST, true);

        const claimed = await store.claimExpiryAnnouncements(NOW, 500);

        expect(names(claimed)).toEqual(names(due));
        expect(claimed.every(k => k.status.phase === 'Approved')).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'claims a key once for ever, and leaves the key as it was',
      async () => {
        const expired = await key(PAST);
        const [claimed] = await store.claimExpiryAnnouncements(NOW, 500);
        // The Kubernetes store writes an annotation of its own: a new resourceVersion only.
        const { resourceVersion: _, ...metadata } = expired.metadata;
        expect(claimed).toMatchObject({ metadata, spec: expired.spec, status: expired.status });
        await expect(store.claimExpiryAnnouncements(NOW, 500)).resolves.toEqual([]);
        await expect(
          store.claimExpiryAnnouncements(new Date('2031-01-01T00:00:00Z'), 500),
        ).resolves.toEqual([]);
        const read = await store.getKey(expired.metadata);
        expect(read?.status).toEqual(expired.status);
        expect(read?.spec).toEqual(expired.spec);
        expect(read?.metadata.annotations).toBeUndefined();
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'claims at most `limit` keys a call, the rest in later calls',
      async () => {
        const expired = [await key(PAST), await key(PAST), await key(PAST)];
        const first = await store.claimExpiryAnnouncements(NOW, 2);
        const second = await store.claimExpiryAnnouncements(NOW, 2);
        expect(first).toHaveLength(2);
        expect(names([...first, ...second])).toEqual(names(expired));
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'gives each due key to exactly one of two concurrent claimers',
      async () => {
        const expired = await Promise.all(Array.from({ length: 12 }, () => key(PAST)));
        const [a, b] = await Promise.all([
          store.claimExpiryAnnouncements(NOW, 500),
          store.claimExpiryAnnouncements(NOW, 500),
        ]);
        const all = [...a, ...b];
        expect(names(all)).toEqual(names(expired));
        expect(new Set(names(all)).size).toBe(all.length);
      },
      TEST_TIMEOUT_MS,
    );
  });
}
