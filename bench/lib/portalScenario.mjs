/*
 * What the portal benchmark asks, and how: the HTTP requests (with the user who sends
 * each), the store queries behind them, and the bulk approval.
 */
import { keyName, pendingCount, pendingPositions } from './portalData.mjs';

const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';

/** The fixture users the benchmark signs in as. */
export const USERS = ['alice', 'bob', 'carol'];
/** Admin lists return every Pending key (10,000 at 100,000 records): sampled less often. */
export const ADMIN_EVERY = 4;
/** Keys per bulk approval (the API's maximum). */
export const BULK_SIZE = 100;

/** The HTTP measurements, in table order. `every`: sampled every n-th iteration. */
export const HTTP_ROUTES = [
  { id: 'my', route: 'GET /requests/my', caller: 'alice', path: '/requests/my' },
  { id: 'list-alice', route: 'GET /requests', caller: 'alice', path: '/requests' },
  {
    id: 'list-bob',
    route: 'GET /requests',
    caller: 'bob',
    note: 'owner of payments-api',
    path: '/requests',
  },
  {
    id: 'admin-pending',
    route: 'GET /requests?status=Pending',
    caller: 'carol',
    note: 'admin',
    path: '/requests?status=Pending',
    every: ADMIN_EVERY,
  },
  {
    id: 'page-first',
    route: 'GET /requests?status=Pending&limit=100',
    caller: 'carol',
    note: 'admin, first page',
    path: '/requests?status=Pending&limit=100',
  },
  {
    id: 'page-last',
    route: 'GET /requests?status=Pending&limit=100&continue=…',
    caller: 'carol',
    note: 'admin, last page',
    // The token of the last page, found by walking the list once (see findLastPages).
    path: run => run.lastPage.path,
  },
  {
    id: 'floor-empty',
    route: 'GET /requests/my?namespace=empty',
    caller: 'alice',
    note: 'floor: same path, 0 rows',
    path: '/requests/my?namespace=empty',
  },
  {
    id: 'floor-authorize',
    route: 'POST /api/permission/authorize',
    caller: 'alice',
    note: 'floor: the RBAC round trip alone, read.all + read.own',
    url: '/api/permission/authorize',
    body: {
      items: ['portal.apikey.read.all', 'portal.apikey.read.own'].map((name, index) => ({
        id: String(index),
        permission: { type: 'basic', name, attributes: { action: 'read' } },
      })),
    },
  },
];

/** The store queries behind the list routes (same ids), timed without HTTP. */
export const STORE_QUERIES = [
  { id: 'my', label: 'listKeys({requestedBy: alice})', filter: { requestedBy: ALICE } },
  {
    id: 'list-alice',
    label: 'listKeys({ownedBy: alice})',
    filter: { ownedBy: { userRef: ALICE, ownershipRefs: [ALICE] } },
  },
  {
    id: 'list-bob',
    label: 'listKeys({ownedBy: bob + payments-team})',
    filter: { ownedBy: { userRef: BOB, ownershipRefs: [BOB, 'group:default/payments-team'] } },
  },
  {
    id: 'admin-pending',
    label: "listKeys({phase: 'Pending'})",
    filter: { phase: 'Pending' },
    every: ADMIN_EVERY,
  },
  {
    id: 'page-first',
    label: "listKeysPage({phase: 'Pending'}, first 100)",
    filter: { phase: 'Pending' },
    page: () => ({ limit: PAGE_SIZE }),
  },
  {
    id: 'page-last',
    label: "listKeysPage({phase: 'Pending'}, last 100)",
    filter: { phase: 'Pending' },
    page: run => ({ limit: PAGE_SIZE, cursor: run.lastPage.cursor }),
  },
];

/** The page size of the paging measurements. */
export const PAGE_SIZE = 100;

/**
 * Finds the last page of the admin's Pending list, once per run, by walking it: over
 * HTTP as carol (`run.lastPage.path` carries that page's continue token) and on the
 * store (`run.lastPage.cursor`). With as many Pending keys as one page holds, the first
 * page is the last.
 */
export async function findLastPages(run, store) {
  let path = `/requests?status=Pending&limit=${PAGE_SIZE}`;
  for (;;) {
    const { json } = await timedCall(run.backend, run.tokens.carol, 'GET', `/api/portal${path}`);
    const token = json.metadata?.continue;
    if (token === undefined) break;
    path = `/requests?status=Pending&limit=${PAGE_SIZE}&continue=${encodeURIComponent(token)}`;
  }
  let cursor;
  for (;;) {
    const page = await store.listKeysPage({ phase: 'Pending' }, { limit: PAGE_SIZE, cursor });
    if (page.cursor === undefined) break;
    cursor = page.cursor;
  }
  run.lastPage = { path, cursor };
}

/** One store query of STORE_QUERIES on `store`: the keys it returns. */
export async function storeQuery(store, query, run) {
  if (query.page === undefined) return store.listKeys(query.filter);
  return (await store.listKeysPage(query.filter, query.page(run))).items;
}

/** `GET /requests/my — alice (note)`: how tables name a route. */
export function describeRoute(route) {
  return `${route.route} — ${route.caller}${route.note ? ` (${route.note})` : ''}`;
}

/** One timed HTTP call (request sent → whole body read); throws unless it answers 200. */
export async function timedCall(backend, token, method, url, body) {
  const started = performance.now();
  const response = await fetch(`${backend.baseUrl}${url}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200) {
    throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 500)}`);
  }
  return { elapsed, json: JSON.parse(text) };
}

/** Sends one of HTTP_ROUTES as its caller (`run` resolves a path that depends on it). */
export function routeCall(backend, tokens, route, run) {
  const path = typeof route.path === 'function' ? route.path(run) : route.path;
  return route.url === undefined
    ? timedCall(backend, tokens[route.caller], 'GET', `/api/portal${path}`)
    : timedCall(backend, tokens[route.caller], 'POST', route.url, route.body);
}

/** The 100 (or, with fewer records, all) Pending keys carol approves in one call. */
export function bulkBatch(records) {
  return pendingPositions(Math.min(BULK_SIZE, pendingCount(records)), records).map(keyName);
}

/** Carol approves `names` in one bulk call; throws unless every item succeeded. */
export async function bulkApprove(backend, token, names) {
  const { elapsed, json } = await timedCall(
    backend,
    token,
    'POST',
    '/api/portal/requests/bulk-approve',
    {
      requests: names.map(name => ({ namespace: 'bench', name })),
      reason: 'benchmark',
    },
  );
  const failed = json.results.filter(result => !result.success);
  if (failed.length > 0) {
    throw new Error(
      `bulk-approve: ${failed.length} items failed, e.g. ${JSON.stringify(failed[0])}`,
    );
  }
  return elapsed;
}
