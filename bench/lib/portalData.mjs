/*
 * The portal benchmark's data set: 100 API products and N API key requests (keys) from
 * 1,000 users, generated deterministically so that every run and every scale sees the
 * same rows.
 *
 * Shape:
 * - Users 0–4 are the catalog's fixture users (alice, bob, dave, carol, erin) — the ones
 *   the benchmark signs in as; users 5–999 are filler users that exist only in the data.
 * - Product 0, `payments-api`, is owned by `group:default/payments-team` (bob and dave);
 *   products 1–99 are owned by filler users and filler teams. So payments-team owns one
 *   product of 100.
 * - The FIXTURE SLICE is the same at every scale: each fixture user holds 100 keys, one
 *   per product (an average user at 100,000 records), and payments-api holds 500 keys in
 *   all (its 5 fixture keys plus 495 from filler users 5–499). So alice's lists answer
 *   100 rows and bob's `GET /requests` 599 rows (his 100 plus the other 499 keys of his
 *   team's product) at 1,000, 10,000 and 100,000 records alike: the growth columns then
 *   show what the table size costs, not what a longer answer costs.
 * - FILLER keys make up the rest: filler users 5–999 round-robin over products 1–99.
 * - Phases: 10 % Pending, 10 % Rejected, 80 % Approved (with a secret row), by position.
 *   No user has two Pending keys for the same product and tier (the store's partial
 *   unique index), which is what lets the benchmark set approved keys back to Pending.
 */
import { randomBytes } from 'node:crypto';

/** The namespace of every generated record. */
export const BENCH_NAMESPACE = 'bench';
/** Users, products and keys per fixture user (see the comment above). */
export const USER_COUNT = 1000;
export const PRODUCT_COUNT = 100;
export const FIXTURE_USERS = ['alice', 'bob', 'dave', 'carol', 'erin'];
export const KEYS_PER_FIXTURE_USER = PRODUCT_COUNT;
/** All keys of payments-api (product 0), fixture ones included. */
export const PAYMENTS_API_KEYS = 500;
/** The smallest data set that holds the fixture slice. */
export const FIXTURE_SLICE_SIZE =
  FIXTURE_USERS.length * KEYS_PER_FIXTURE_USER + (PAYMENTS_API_KEYS - FIXTURE_USERS.length);
const PLAN_TIERS = ['gold', 'silver', 'bronze'];
const FIRST_FILLER_USER = FIXTURE_USERS.length;
const FILLER_USER_COUNT = USER_COUNT - FIRST_FILLER_USER;
const CREATED_AT = '2026-01-01T00:00:00Z';
const CREATED_AT_MS = Date.parse(CREATED_AT);

/**
 * Key number `position` was created `position` seconds after the products: creation
 * times spread like real ones, so the keyset pages of the database store (creation
 * time, namespace, name) order by time and not only by the name tie-break.
 */
function keyCreatedAt(position) {
  return new Date(CREATED_AT_MS + (position + 1) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The user entity ref of user number `index`. */
export function userRef(index) {
  return index < FIRST_FILLER_USER
    ? `user:default/${FIXTURE_USERS[index]}`
    : `user:default/user-${String(index).padStart(4, '0')}`;
}

/** The name of product number `index` (product 0 is payments-api). */
export function productName(index) {
  return index === 0 ? 'payments-api' : `product-${String(index).padStart(3, '0')}`;
}

function productOwner(index) {
  if (index === 0) return 'group:default/payments-team';
  // Half owned by a filler team, half by a filler user: both kinds of owner refs.
  return index % 2 === 0
    ? `group:default/team-${String(index).padStart(3, '0')}`
    : userRef(FIRST_FILLER_USER + index);
}

/** The 100 product rows (table `portal_api_products`). */
export function productRows() {
  return Array.from({ length: PRODUCT_COUNT }, (_, index) => {
    const owner = productOwner(index);
    return {
      namespace: BENCH_NAMESPACE,
      name: productName(index),
      uid: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
      resource_version: 1,
      created_at: CREATED_AT,
      owner,
      labels: JSON.stringify({ tier: index % 3 === 0 ? 'premium' : 'standard' }),
      annotations: JSON.stringify({ 'backstage.io/owner': owner }),
      spec: JSON.stringify({
        displayName: `Product ${index}`,
        description: 'Generated for the portal benchmark',
        targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
        approvalMode: 'manual',
        publishStatus: 'Published',
      }),
    };
  });
}

function phaseOf(position) {
  const bucket = position % 10;
  if (bucket === 0) return 'Pending';
  if (bucket === 1) return 'Rejected';
  return 'Approved';
}

/** Who requested key number `position` of a data set, for which product and tier. */
function keyPlacement(position) {
  const fixtureKeys = FIXTURE_USERS.length * KEYS_PER_FIXTURE_USER;
  if (position < fixtureKeys) {
    const user = Math.floor(position / KEYS_PER_FIXTURE_USER);
    return { user, product: position % KEYS_PER_FIXTURE_USER, tier: PLAN_TIERS[user % 3] };
  }
  if (position < FIXTURE_SLICE_SIZE) {
    return { user: FIRST_FILLER_USER + (position - fixtureKeys), product: 0, tier: 'gold' };
  }
  const filler = position - FIXTURE_SLICE_SIZE;
  const user = FIRST_FILLER_USER + (filler % FILLER_USER_COUNT);
  const round = Math.floor(filler / FILLER_USER_COUNT);
  // Rounds 0–98 give a user 99 different products; later rounds change the tier.
  return {
    user,
    product: 1 + ((user + round) % (PRODUCT_COUNT - 1)),
    tier: PLAN_TIERS[Math.floor(round / (PRODUCT_COUNT - 1)) % PLAN_TIERS.length],
  };
}

/** The name of key number `position` (a DNS label like the store's generated names). */
export function keyName(position) {
  return `${productName(keyPlacement(position).product)}-k${position.toString(36).padStart(6, '0')}`;
}

/**
 * Key rows (table `portal_api_keys`) and secret rows (`portal_api_key_secrets`) for
 * positions [from, to), ready for a batch insert.
 */
export function keyBatch(from, to) {
  const keys = [];
  const secrets = [];
  for (let position = from; position < to; position++) {
    const { user, product, tier } = keyPlacement(position);
    const phase = phaseOf(position);
    const name = keyName(position);
    keys.push({
      namespace: BENCH_NAMESPACE,
      name,
      uid: `10000000-0000-4000-8000-${String(position).padStart(12, '0')}`,
      resource_version: phase === 'Pending' ? 1 : 2,
      created_at: keyCreatedAt(position),
      product_name: productName(product),
      plan_tier: tier,
      use_case: 'load test',
      requested_by: userRef(user),
      requester_email: null,
      expires_at: null,
      phase,
      reviewed_by: phase === 'Pending' ? null : 'user:default/carol',
      reviewed_at: phase === 'Pending' ? null : CREATED_AT,
      reason: null,
      secret_revealed: false,
      secret_revealed_at: null,
    });
    if (phase === 'Approved') {
      secrets.push({
        namespace: BENCH_NAMESPACE,
        name,
        secret: randomBytes(32).toString('base64url'),
      });
    }
  }
  return { keys, secrets };
}

/** Positions of the first `howMany` Pending keys (the bulk-approve batch). */
export function pendingPositions(howMany, recordCount) {
  const positions = [];
  for (let position = 0; position < recordCount && positions.length < howMany; position++) {
    if (phaseOf(position) === 'Pending') positions.push(position);
  }
  return positions;
}

/** How many keys of a data set of `recordCount` are Pending. */
export function pendingCount(recordCount) {
  return Math.ceil(recordCount / 10);
}
