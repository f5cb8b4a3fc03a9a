/*
 * A property-based fuzzer of every portal route on the real backend: fast-check picks an
 * operation from `portalOperations` (portal-common's table, the one list of the portal's routes)
 * and generates its path parameters (existing names, names that do not exist, and segments no
 * name can be: encoded slashes, dots, percent signs, non-ASCII, 300 characters), its query string
 * (the keys the portal reads with values of any kind, and keys it does not know), and its body
 * (a valid body with one field replaced by any JSON value, or dropped, or an unknown field
 * added; any JSON; text that is not JSON; none), with the content types a client might send.
 * Every answer must keep these properties:
 *
 * - never a 5xx, and always an answer (no hang, no dropped connection);
 * - well-formed: a 4xx carries Backstage's error body (`error.name`, `error.message`,
 *   `response.statusCode` equal to the status); a 2xx other than 204 carries JSON;
 * - never another person's data: another user's key request, whose use case carries
 *   {@link PORTAL_FOREIGN_MARKER}, exists in the portal, and no answer may contain the marker.
 *
 * Used by the bounded run in `yarn test` (e2e/fuzzPortalRoutes.test.ts) and the long run
 * (bench/fuzz.mjs), with a seed and a run count.
 */
import fc from 'fast-check';
import { portalOperations, type PortalOperation } from '@devportal/plugin-portal-common';
import type { BackendProcess } from '../../testing/startBackendProcess';
import { createPublishedProduct, portalClient, uniqueName } from '../../testing/portalHttp';
import {
  assertEveryAnswer,
  FuzzAnswer,
  FuzzRequest,
  FuzzRun,
  parsedJson,
  PRINTABLE_ASCII,
} from './fuzzHttp';

/** Marks the other person's key request; no answer to the fuzzing user may contain it. */
export const PORTAL_FOREIGN_MARKER = 'FOREIGN-PORTAL-KEY-MARKER-4c1d';

/** What the fuzzer knows of the backend it fuzzes. */
export interface PortalFuzzTarget {
  baseUrl: string;
  /** The fuzzing user's token. */
  token: string;
  /** Names that exist: products, key requests (the fuzzing user's and another's). */
  existing: Array<{ namespace: string; name: string }>;
}

/** A valid body per operation with one; the fuzzer mutates it. */
const VALID_BODIES: Record<string, Record<string, unknown>> = {
  createApiProduct: {
    metadata: { namespace: 'toystore', name: 'fuzz-product' },
    spec: {
      displayName: 'Fuzz',
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
      publishStatus: 'Draft',
      approvalMode: 'manual',
    },
  },
  updateApiProduct: { spec: { description: 'changed' } },
  createRequest: {
    apiProductRef: { namespace: 'toystore', name: 'fuzz-product' },
    planTier: 'gold',
    useCase: 'fuzzing',
  },
  bulkApproveRequests: { requests: [{ namespace: 'toystore', name: 'fuzz-key' }] },
  bulkRejectRequests: { requests: [{ namespace: 'toystore', name: 'fuzz-key' }], reason: 'no' },
  updateRequest: { planTier: 'silver', useCase: 'changed', expiresAt: null },
  approveRequest: { reason: 'ok' },
  rejectRequest: { reason: 'no' },
};

/** The query keys the portal reads on its lists. */
const QUERY_KEYS = ['namespace', 'status', 'limit', 'continue'];

const odd = fc.string({ unit: fc.constantFrom(...PRINTABLE_ASCII), maxLength: 40 });

function portalArbitraries(target: PortalFuzzTarget) {
  const operations = Object.entries(portalOperations) as Array<[string, PortalOperation]>;
  const segment = fc.oneof(
    fc.constantFrom(...target.existing.flatMap(ref => [ref.namespace, ref.name])),
    fc.string({ maxLength: 30 }).map(encodeURIComponent),
    fc.constantFrom('..', '.', '%2F', '%2e%2e', '%00', '%', '%zz', 'a%2Fb', 'x'.repeat(300), 'ü'),
  );
  const ref = fc.oneof(
    fc.constantFrom(...target.existing),
    fc.record({ namespace: segment, name: segment }),
  );
  const query = fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom(...QUERY_KEYS), odd),
        fc.oneof(odd, fc.integer().map(String), fc.constantFrom('-1', '0', '1e9', 'Pending')),
      ),
      { maxLength: 4 },
    )
    .map(pairs => (pairs.length ? `?${new URLSearchParams(pairs).toString()}` : ''));
  const mutated = (valid: Record<string, unknown>) =>
    fc.oneof(
      fc.constant(valid),
      fc
        .tuple(fc.constantFrom(...Object.keys(valid)), fc.jsonValue({ maxDepth: 3 }))
        .map(([key, value]) => ({ ...valid, [key]: value })),
      fc.constantFrom(...Object.keys(valid)).map(key => {
        const { [key]: _dropped, ...rest } = valid;
        return rest;
      }),
      fc
        .tuple(odd, fc.jsonValue({ maxDepth: 2 }))
        .map(([key, value]) => ({ ...valid, [key]: value })),
    );
  const body = (operationId: string) => {
    const valid = VALID_BODIES[operationId];
    return fc.oneof(
      {
        weight: 5,
        arbitrary: valid ? mutated(valid).map(b => JSON.stringify(b)) : fc.constant('{}'),
      },
      { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(v => JSON.stringify(v)) },
      { weight: 1, arbitrary: fc.string({ maxLength: 100 }) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
  };
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'application/merge-patch+json',
        'text/plain',
        'application/json; charset=utf-16',
      ),
    },
    { weight: 1, arbitrary: odd },
  );
  return fc
    .constantFrom(...operations)
    .chain(([operationId, operation]) =>
      fc.record({
        operation: fc.constant(operation),
        ref,
        query: operation.query ? query : fc.oneof(fc.constant(''), query),
        body: operation.body
          ? body(operationId)
          : fc.oneof(fc.constant(undefined), body(operationId)),
        contentType,
      }),
    )
    .map(({ operation, ref: r, query: q, body: b, contentType: c }) => {
      const path = operation.path.replace(':namespace', r.namespace).replace(':name', r.name);
      const request: FuzzRequest = {
        method: operation.method.toUpperCase(),
        path: `/api/portal${path}${q}`,
        headers: {
          authorization: `Bearer ${target.token}`,
          ...(b === undefined ? {} : { 'content-type': c }),
        },
        // fetch sends no body with GET.
        ...(b === undefined || operation.method === 'get' ? {} : { body: b }),
      };
      return request;
    });
}

/** The reasons `answer` breaks a property, empty when it keeps them all. */
export function portalAnswerProblems(answer: FuzzAnswer): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  if (answer.text.includes(PORTAL_FOREIGN_MARKER)) problems.push("another person's key request");
  if (answer.status === 204) {
    if (answer.text !== '') problems.push('a body on a 204');
    return problems;
  }
  const json = parsedJson(answer.text);
  if (!json) {
    problems.push('a body that is not JSON');
    return problems;
  }
  if (answer.status >= 400) {
    const body = json.value as {
      error?: { name?: unknown; message?: unknown };
      response?: { statusCode?: unknown };
    } | null;
    if (
      typeof body?.error?.name !== 'string' ||
      typeof body.error.message !== 'string' ||
      body.response?.statusCode !== answer.status
    ) {
      problems.push("an error without Backstage's error body");
    }
  }
  return problems;
}

/** Runs the portal fuzzer: `numRuns` generated requests from `seed`; throws on the first failure. */
export async function fuzzPortalRoutes(target: PortalFuzzTarget, run: FuzzRun): Promise<void> {
  await assertEveryAnswer(target.baseUrl, portalArbitraries(target), portalAnswerProblems, run);
}

/**
 * Seeds `backend` for the portal fuzzer: a product of bob's team, a key request of alice's (the
 * fuzzing user) and one of dave's whose use case carries {@link PORTAL_FOREIGN_MARKER}. Returns
 * the target, and a check that dave's request is still there as he made it.
 */
export async function preparePortalFuzzTarget(backend: BackendProcess): Promise<{
  target: PortalFuzzTarget;
  foreignRequestUnchanged(): Promise<boolean>;
}> {
  const [alice, bob, dave] = await Promise.all(
    ['alice', 'bob', 'dave'].map(user => backend.signIn(user)),
  );
  const product = uniqueName('fuzz');
  await createPublishedProduct(backend, bob, product, { owner: 'group:default/payments-team' });
  const apiProductRef = { namespace: 'toystore', name: product };
  const own = await portalClient(backend, alice).createRequest({
    apiProductRef,
    planTier: 'gold',
    useCase: 'fuzzing, my own',
  });
  const foreign = await portalClient(backend, dave).createRequest({
    apiProductRef,
    planTier: 'gold',
    useCase: PORTAL_FOREIGN_MARKER,
  });
  const refOf = (key: { metadata: { namespace?: string; name?: string } }) => ({
    namespace: key.metadata.namespace ?? 'toystore',
    name: key.metadata.name ?? '',
  });
  return {
    target: {
      baseUrl: backend.baseUrl,
      token: alice,
      existing: [apiProductRef, refOf(own), refOf(foreign)],
    },
    async foreignRequestUnchanged() {
      const mine = await portalClient(backend, dave).listMyRequests();
      const found = mine.items.find(key => key.metadata.name === foreign.metadata.name);
      return found?.spec.useCase === PORTAL_FOREIGN_MARKER && found.status?.phase === 'Pending';
    },
  };
}
