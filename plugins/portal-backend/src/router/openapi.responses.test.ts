/*
 * The response side of openapi.yaml is written by hand: this test holds it to what the
 * plugin really answers. It drives the real plugin (SQLite store, the toystore manifests;
 * permissions allow everything, as permission.enabled false does) through every operation
 * and validates each response body against the schema the document gives for that
 * operation and status (Ajv, OpenAPI 3.0 `nullable` included). An undocumented status fails
 * too.
 */
import path from 'node:path';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import request from 'supertest';
import { portalPlugin } from '../plugin';
import {
  openApiDocument as document,
  resolveRef,
  schemaErrors,
} from './__testUtils__/openapiDocument';
import { portalRoutes, toOpenApiPath, type PortalOperationId } from './routes';

const TOYSTORE = path.resolve(__dirname, '..', '..', '..', '..', 'examples', 'toystore.yaml');

type Json = Record<string, any>;

/** Fails unless `body` is what the document says `operationId` answers with `status`. */
function expectDocumented(operationId: PortalOperationId, status: number, body: unknown) {
  const route = portalRoutes.find(r => r.operationId === operationId)!;
  const operation = document.paths[toOpenApiPath(route.path)][route.method];
  const response = operation.responses[String(status)];
  expect({ operationId, status, documented: response !== undefined }).toEqual({
    operationId,
    status,
    documented: true,
  });
  const schema = resolveRef(response).content?.['application/json']?.schema;
  if (schema === undefined) {
    expect({ operationId, status, body }).toEqual({ operationId, status, body: {} });
    return;
  }
  expect({ operationId, status, errors: schemaErrors(schema, body) }).toEqual({
    operationId,
    status,
    errors: [],
  });
}

describe('openapi.yaml responses match what the plugin answers (real SQLite store)', () => {
  it('for every operation, on success and on a missing record', async () => {
    const { server } = await startTestBackend({
      features: [
        portalPlugin,
        mockServices.rootConfig.factory({
          data: { portal: { manifests: [TOYSTORE] } },
        }),
      ],
    });
    const call = async (operationId: PortalOperationId, url: string, send?: object) => {
      const route = portalRoutes.find(r => r.operationId === operationId)!;
      const test = request(server)[route.method](`/api/portal${url}`);
      const response = await (send === undefined ? test : test.send(send));
      expectDocumented(operationId, response.status, response.body);
      return response;
    };
    const targetRef = {
      group: 'gateway.networking.k8s.io',
      kind: 'HTTPRoute',
      name: 'toystore',
    };

    expect(
      (
        await call('createApiProduct', '/apiproducts', {
          metadata: { namespace: 'toystore', name: 'toys' },
          spec: {
            displayName: 'Toys',
            targetRef,
            publishStatus: 'Published',
            tags: ['retail'],
            contact: { team: 'payments' },
          },
        })
      ).status,
    ).toBe(201);
    await call('listApiProducts', '/apiproducts?limit=1');
    await call('getApiProduct', '/apiproducts/toystore/toys');
    await call('getApiProduct', '/apiproducts/toystore/missing');
    await call('updateApiProduct', '/apiproducts/toystore/toys', {
      spec: { description: 'toys', tags: null },
    });
    await call('listHttpRoutes', '/httproutes');
    await call('listPlanPolicies', '/planpolicies?limit=1');
    await call('getPlanPolicy', '/planpolicies/toystore/toystore-plans');
    await call('listAuthPolicies', '/authpolicies');
    await call('listRateLimitPolicies', '/ratelimitpolicies');

    const keys: string[] = [];
    for (const planTier of ['gold', 'silver', 'bronze']) {
      const created = await call('createRequest', '/requests', {
        apiProductRef: { namespace: 'toystore', name: 'toys' },
        planTier,
        useCase: 'checkout',
        expiresAt: '2099-01-01T00:00:00Z',
      });
      expect(created.status).toBe(201);
      keys.push(created.body.metadata.name);
    }
    const [approved, rejected, edited] = keys;
    await call('createRequest', '/requests', {
      apiProductRef: { namespace: 'toystore', name: 'toys' },
      planTier: 'gold',
    });
    await call('listRequests', '/requests?status=Pending&limit=2');
    await call('listMyRequests', '/requests/my');
    await call('updateRequest', `/requests/toystore/${edited}`, {
      expiresAt: null,
    });
    expect(
      (await call('approveRequest', `/requests/toystore/${approved}/approve`, {})).status,
    ).toBe(200);
    await call('rejectRequest', `/requests/toystore/${rejected}/reject`, {
      reason: 'no',
    });
    await call('rejectRequest', `/requests/toystore/${rejected}/reject`, {});
    const secret = await call('revealApiKeySecret', `/apikeys/toystore/${approved}/secret`);
    expect(secret.status).toBe(200);
    await call('revealApiKeySecret', `/apikeys/toystore/${approved}/secret`);
    const bulk = await call('bulkApproveRequests', '/requests/bulk-approve', {
      requests: [
        { namespace: 'toystore', name: edited },
        { namespace: 'toystore', name: 'missing' },
      ],
    });
    expect(bulk.body.results.map((r: Json) => r.success)).toEqual([true, false]);
    await call('bulkRejectRequests', '/requests/bulk-reject', {
      requests: [{ namespace: 'toystore', name: approved }],
    });
    await call('createRequest', '/requests', { planTier: 'gold' });
    expect((await call('deleteRequest', `/requests/toystore/${approved}`)).status).toBe(204);
    await call('deleteRequest', `/requests/toystore/${approved}`);
    expect((await call('deleteApiProduct', '/apiproducts/toystore/toys')).status).toBe(204);
  });

  it('fails for a body or a status the document does not describe', () => {
    expect(() => expectDocumented('getApiProduct', 200, { kind: 'APIProduct' })).toThrow();
    expect(() => expectDocumented('getPlanPolicy', 409, {})).toThrow();
    expect(() => expectDocumented('deleteRequest', 204, { deleted: true })).toThrow();
  });
});
