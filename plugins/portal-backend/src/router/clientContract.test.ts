/*
 * The client frontends use (PortalClient, @devportal/plugin-portal-common) agrees with the
 * router and with openapi.yaml, the three being built from one table (`portalOperations`):
 * - at compile time (`yarn tsc`): every operation has a client method of the same name whose
 *   answer, body and query types are exactly the operation's;
 * - at run time: every client method, driven against the real plugin (SQLite store, the
 *   toystore manifests, permissions allowing everything), sends a request the document
 *   describes — the method and path of the operation named like the method, documented query
 *   parameters, a documented content type and a body valid against the documented request
 *   schema — and gets an answer valid against the documented response schema.
 */
import path from 'node:path';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  PortalClient,
  portalOperations,
  type ObjectRef,
  type PortalOperationBody,
  type PortalOperationId,
  type PortalOperationQuery,
  type PortalOperationResponse,
} from '@devportal/plugin-portal-common';
import { portalPlugin } from '../plugin';
import {
  documentedOperationAt,
  openApiDocument,
  resolveRef,
  schemaErrors,
} from './__testUtils__/openapiDocument';

const TOYSTORE = path.resolve(__dirname, '..', '..', '..', '..', 'examples', 'toystore.yaml');
const BASE_PATH = '/api/portal';

type Json = Record<string, any>;

/** Intersections and aliases spelled out, deeply, so that equal shapes compare equal. */
type Normalize<T> = T extends object ? { [K in keyof T]: Normalize<T[K]> } : T;
/** `true` when both are the same type (optional and extra fields included). */
type Same<A, B> =
  (<T>() => T extends Normalize<A> ? 1 : 2) extends <T>() => T extends Normalize<B> ? 1 : 2
    ? true
    : false;
/** The body a client method takes: its only parameter, or the one after the record's ref. */
type BodyParameter<F> = F extends (...args: infer P) => any
  ? P extends [infer B]
    ? B
    : P extends [ObjectRef, (infer B)?]
      ? B
      : never
  : never;
type Method<K extends PortalOperationId> = PortalClient[K];
/** Fails to compile unless every entry of `T` is `true` (a call without a run-time effect). */
function expectTypesAgree<T extends Record<PortalOperationId, true>>(_checks?: T): void {}

type ClientAnswersAreTheContract = {
  [K in PortalOperationId]: Same<Awaited<ReturnType<Method<K>>>, PortalOperationResponse<K>>;
};
type ClientBodiesAreTheContract = {
  [K in PortalOperationId]: [PortalOperationBody<K>] extends [never]
    ? true
    : Same<Exclude<BodyParameter<Method<K>>, undefined>, PortalOperationBody<K>>;
};
/** The query a client method takes: its first parameter, or the one after the record's ref. */
type QueryParameter<F> = F extends (...args: infer P) => any
  ? P extends [ObjectRef, (infer Q)?]
    ? Q
    : P[0]
  : never;
type ClientQueriesAreTheContract = {
  [K in PortalOperationId]: [PortalOperationQuery<K>] extends [never]
    ? true
    : Same<Exclude<QueryParameter<Method<K>>, undefined>, PortalOperationQuery<K>>;
};

/** One request the client sent, and the answer it got. */
interface Exchange {
  clientMethod: string;
  method: string;
  url: URL;
  contentType?: string;
  body?: unknown;
  status: number;
  answer?: unknown;
}

/**
 * Why `exchange` is not a call the document describes for the operation named like the
 * client method (none: it is).
 */
function undocumented(exchange: Exchange): string[] {
  const operationId = exchange.clientMethod.replace(/Pages$/, '');
  const pathname = exchange.url.pathname.slice(BASE_PATH.length);
  const found = documentedOperationAt(exchange.method, pathname);
  if (found === undefined) {
    return [`${exchange.method} ${pathname} is not documented`];
  }
  if (found.operationId !== operationId) {
    return [`${exchange.method} ${pathname} is ${found.operationId}, not ${operationId}`];
  }
  const problems: string[] = [];
  const parameters = [...(found.pathItem.parameters ?? []), ...(found.operation.parameters ?? [])]
    .map(resolveRef)
    .filter(parameter => parameter.in === 'query')
    .map(parameter => parameter.name);
  for (const name of exchange.url.searchParams.keys()) {
    if (!parameters.includes(name)) problems.push(`query parameter ${name} is not documented`);
  }
  const content = found.operation.requestBody?.content ?? {};
  if (exchange.body !== undefined) {
    const type = exchange.contentType?.split(';')[0];
    const schema = type === undefined ? undefined : content[type]?.schema;
    if (schema === undefined) {
      problems.push(`a ${type} body is not documented`);
    } else {
      problems.push(
        ...schemaErrors(schema, exchange.body).map(e => `body${e.instancePath} ${e.message}`),
      );
    }
  } else if (found.operation.requestBody?.required === true) {
    problems.push('the documented request body is missing');
  }
  const response = found.operation.responses?.[String(exchange.status)];
  if (response === undefined) {
    problems.push(`status ${exchange.status} is not documented`);
  } else {
    const schema = resolveRef(response).content?.['application/json']?.schema;
    if (schema === undefined && exchange.answer !== undefined) {
      problems.push(`status ${exchange.status} documents no body`);
    }
    if (schema !== undefined) {
      problems.push(
        ...schemaErrors(schema, exchange.answer).map(e => `answer${e.instancePath} ${e.message}`),
      );
    }
  }
  return problems;
}

/** A fetch that records each exchange under the client method being driven. */
function recordingFetch(exchanges: Exchange[], current: () => string): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const text = await response.clone().text();
    const headers = new Headers(init?.headers);
    exchanges.push({
      clientMethod: current(),
      method: init?.method ?? 'GET',
      url: new URL(String(input)),
      contentType: headers.get('content-type') ?? undefined,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
      status: response.status,
      answer: text === '' ? undefined : JSON.parse(text),
    });
    return response;
  };
}

describe('PortalClient agrees with the router and openapi.yaml', () => {
  it("has a method per operation, with the operation's answer, body and query types", () => {
    expectTypesAgree<ClientAnswersAreTheContract>();
    expectTypesAgree<ClientBodiesAreTheContract>();
    expectTypesAgree<ClientQueriesAreTheContract>();
    const missing = Object.keys(portalOperations).filter(
      operationId => typeof (PortalClient.prototype as Json)[operationId] !== 'function',
    );
    expect(missing).toEqual([]);
  });

  it('every method sends a documented request and gets a documented answer (real plugin)', async () => {
    const { server } = await startTestBackend({
      features: [
        portalPlugin,
        mockServices.rootConfig.factory({ data: { portal: { manifests: [TOYSTORE] } } }),
      ],
    });
    const exchanges: Exchange[] = [];
    let current = '';
    const client = new PortalClient({
      baseUrl: async () => `http://127.0.0.1:${server.port()}${BASE_PATH}`,
      fetch: recordingFetch(exchanges, () => current),
    });
    /** Calls one client method, recording its exchanges under its name. */
    const drive = async <T>(name: keyof PortalClient, call: () => Promise<T>): Promise<T> => {
      current = name;
      return call();
    };
    const walk = async <T>(name: keyof PortalClient, pages: AsyncIterable<T>) =>
      drive(name, async () => {
        const all: T[] = [];
        for await (const page of pages) all.push(page);
        return all;
      });
    const toys: ObjectRef = { namespace: 'toystore', name: 'toys' };

    await drive('createApiProduct', () =>
      client.createApiProduct({
        metadata: toys,
        spec: {
          displayName: 'Toys',
          targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
          publishStatus: 'Published',
          tags: ['retail'],
        },
      }),
    );
    await drive('createApiProduct', () =>
      client.createApiProduct({
        metadata: { namespace: 'toystore', name: 'games' },
        spec: {
          displayName: 'Games',
          targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
          publishStatus: 'Published',
        },
      }),
    );
    await drive('listApiProducts', () => client.listApiProducts({ limit: 1 }));
    expect(
      await walk('listApiProductsPages', client.listApiProductsPages({}, { limit: 1 })),
    ).toHaveLength(2);
    await drive('getApiProduct', () => client.getApiProduct(toys));
    await drive('updateApiProduct', () =>
      client.updateApiProduct(toys, {
        metadata: { labels: { tier: 'gold' } },
        spec: { description: 'toys', tags: null, contact: { team: 'payments' } },
      }),
    );
    await drive('listHttpRoutes', () => client.listHttpRoutes({ namespace: 'toystore' }));
    await walk('listHttpRoutesPages', client.listHttpRoutesPages({}, { limit: 1 }));
    await drive('listPlanPolicies', () => client.listPlanPolicies({ limit: 1 }));
    await walk('listPlanPoliciesPages', client.listPlanPoliciesPages());
    await drive('getPlanPolicy', () =>
      client.getPlanPolicy({ namespace: 'toystore', name: 'toystore-plans' }),
    );
    await drive('listAuthPolicies', () => client.listAuthPolicies());
    await walk('listAuthPoliciesPages', client.listAuthPoliciesPages());
    await drive('listRateLimitPolicies', () => client.listRateLimitPolicies());
    await walk('listRateLimitPoliciesPages', client.listRateLimitPoliciesPages());

    const keys: ObjectRef[] = [];
    const games = { namespace: 'toystore', name: 'games' };
    for (const [product, planTier] of [
      [toys, 'gold'],
      [toys, 'silver'],
      [toys, 'bronze'],
      [games, 'gold'],
    ] as const) {
      const key = await drive('createRequest', () =>
        client.createRequest({
          apiProductRef: product,
          planTier,
          useCase: 'checkout',
          expiresAt: '2099-01-01T00:00:00Z',
        }),
      );
      keys.push({ namespace: key.metadata.namespace, name: key.metadata.name });
    }
    const [approved, rejected, edited, bulk] = keys;
    await drive('listRequests', () => client.listRequests({ status: 'Pending', limit: 2 }));
    expect(
      (
        await walk(
          'listRequestsPages',
          client.listRequestsPages({ status: 'Pending' }, { limit: 3 }),
        )
      ).flatMap(page => page.items),
    ).toHaveLength(4);
    await drive('listMyRequests', () => client.listMyRequests({ namespace: 'toystore' }));
    await walk('listMyRequestsPages', client.listMyRequestsPages({}, { limit: 3 }));
    await drive('updateRequest', () => client.updateRequest(edited, { expiresAt: null }));
    await drive('approveRequest', () => client.approveRequest(approved));
    await drive('rejectRequest', () => client.rejectRequest(rejected, { reason: 'no' }));
    const secret = await drive('revealApiKeySecret', () => client.revealApiKeySecret(approved));
    expect(secret.apiKey.length).toBeGreaterThan(0);
    const approvedInBulk = await drive('bulkApproveRequests', () =>
      client.bulkApproveRequests({
        requests: [edited, { namespace: 'toystore', name: 'missing' }],
      }),
    );
    expect(approvedInBulk.results.map(result => result.success)).toEqual([true, false]);
    await drive('bulkRejectRequests', () =>
      client.bulkRejectRequests({ requests: [bulk], reason: 'duplicate' }),
    );
    // No MCP product here (no catalog): the grant list is empty and a key is no grant (404).
    await drive('listMcpGrants', () => client.listMcpGrants({ limit: 2 }));
    await walk(
      'listMcpGrantsPages',
      client.listMcpGrantsPages({ targetKind: 'MCPServer' }, { limit: 2 }),
    );
    await expect(drive('getMcpGrant', () => client.getMcpGrant(approved))).rejects.toMatchObject({
      name: 'ResponseError',
      response: { status: 404 },
    });
    await drive('revokeRequest', () => client.revokeRequest(edited, { reason: 'audit' }));
    await drive('deleteRequest', () => client.deleteRequest(approved));
    await drive('deleteApiProduct', () => client.deleteApiProduct(toys));

    const problems = exchanges.flatMap(exchange =>
      undocumented(exchange).map(
        problem =>
          `${exchange.clientMethod}: ${exchange.method} ${exchange.url.pathname}: ${problem}`,
      ),
    );
    expect(problems).toEqual([]);
    // Every method was driven, and every documented operation was reached by its method.
    const methods = Object.getOwnPropertyNames(PortalClient.prototype).filter(
      name => name !== 'constructor',
    );
    expect([...new Set(exchanges.map(e => e.clientMethod))].sort()).toEqual(methods.sort());
    const documented = Object.values(openApiDocument.paths).flatMap(item =>
      Object.values(item as Json).flatMap(operation =>
        typeof operation?.operationId === 'string' ? [operation.operationId] : [],
      ),
    );
    expect([...new Set(exchanges.map(e => e.clientMethod.replace(/Pages$/, '')))].sort()).toEqual(
      documented.sort(),
    );
    // About 45 calls to a backend started for this test: more than Jest's 5 s on a busy machine.
  }, 60_000);

  it('names a call the document does not describe', () => {
    const exchange = (overrides: Partial<Exchange>): Exchange => ({
      clientMethod: 'createRequest',
      method: 'POST',
      url: new URL(`http://localhost${BASE_PATH}/requests`),
      contentType: 'application/json',
      body: { apiProductRef: { namespace: 'toystore', name: 'toys' }, planTier: 'gold' },
      status: 404,
      answer: {
        error: { name: 'NotFoundError', message: 'APIProduct toystore/toys not found' },
        request: { method: 'POST', url: '/api/portal/requests' },
        response: { statusCode: 404 },
      },
      ...overrides,
    });
    expect(undocumented(exchange({}))).toEqual([]);
    expect(
      undocumented(exchange({ url: new URL(`http://localhost${BASE_PATH}/request`) })),
    ).toEqual(['POST /request is not documented']);
    expect(undocumented(exchange({ method: 'PUT' }))).toEqual(['PUT /requests is not documented']);
    expect(undocumented(exchange({ clientMethod: 'bulkApproveRequests' }))).toEqual([
      'POST /requests is createRequest, not bulkApproveRequests',
    ]);
    expect(undocumented(exchange({ contentType: 'text/plain' }))).toEqual([
      'a text/plain body is not documented',
    ]);
    expect(undocumented(exchange({ body: { planTier: 'gold', colour: 'red' } }))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^body must have required property/)]),
    );
    expect(undocumented(exchange({ body: undefined }))).toEqual([
      'the documented request body is missing',
    ]);
    expect(
      undocumented(exchange({ url: new URL(`http://localhost${BASE_PATH}/requests?colour=red`) })),
    ).toEqual(['query parameter colour is not documented']);
    expect(undocumented(exchange({ status: 418 }))).toEqual(['status 418 is not documented']);
    expect(undocumented(exchange({ answer: { message: 'not found' } }))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^answer must have required property/)]),
    );
  });
});
