/*
 * The portal's HTTP surface under /api/portal (spec §4). Handlers are parse → call →
 * respond: bodies and queries are validated here once (the schemas of the contract's
 * `portalOperations`, from which openapi.yaml's schemas are generated), every decision is
 * made by the PortalService (permissions, business rules), and every error is thrown as
 * an `@backstage/errors` error for Backstage's error middleware to render. Changes and
 * secret reveals are wrapped in audit events.
 *
 * Lists take `limit`/`continue` (spec §9): the router opens the client's page token
 * against the route, the filters and the caller, passes the store cursor inside to the
 * service, and seals the next one (PageTokens.ts).
 *
 * Bodies are read once, in front of every route, by jsonBody.ts: JSON, UTF-8, at most
 * 64 KiB (413 beyond, on the declared length), within `requestBodyTimeoutMs` (408).
 */
import type { BackstageCredentials, HttpAuthService } from '@backstage/backend-plugin-api';
import {
  portalOperations,
  type ListPage,
  type ObjectRef,
  type PortalOperationResponse,
} from '@devportal/plugin-portal-common';
import express, { type Request, type Response } from 'express';
import { NotFoundError } from '@backstage/errors';
import Router from 'express-promise-router';
import type { PortalAuditor } from '../audit/PortalAuditor';
import type { PortalService } from '../service/portalService';
import type { RequestQuery } from '../service/types';
import type { Page, PageRequest, ReadOnlyKind } from '../store/types';
import type { PageTokens } from './PageTokens';
import { DEFAULT_REQUEST_BODY_TIMEOUT_MS } from '../config';
import { jsonBody } from './jsonBody';
import { portalRoutes, type PortalOperationId } from './routes';
import { parseInput } from './parseInput';
import { retryAfterWhenUnavailable } from './retryAfterWhenUnavailable';

/** Options of {@link createRouter}. */
export interface PortalRouterOptions {
  service: PortalService;
  httpAuth: HttpAuthService;
  auditor: PortalAuditor;
  /** Seals and opens the `continue` tokens of list pages. */
  pageTokens: PageTokens;
  /** How long a request body may take to arrive (408 after); default 30 s. */
  requestBodyTimeoutMs?: number;
}

type Handler = (req: Request, res: Response) => Promise<void>;

/** The operations that answer a page: the lists. */
type ListOperationId = {
  [K in PortalOperationId]: PortalOperationResponse<K> extends ListPage<unknown> ? K : never;
}[PortalOperationId];

/** What one item of a list operation's page is. */
type ListItem<K extends ListOperationId> =
  PortalOperationResponse<K> extends ListPage<infer T> ? T : never;

/**
 * Answers with the operation's success status and body, both as the contract
 * (`portalOperations`) says: the compiler holds every handler's answer to the type the
 * client and the document take from the same entry.
 */
function respond<K extends PortalOperationId>(
  res: Response,
  operationId: K,
  body: PortalOperationResponse<K>,
) {
  const { status } = portalOperations[operationId];
  if (status === 204) {
    res.status(status).end();
  } else {
    res.status(status).json(body);
  }
}

function refOf(req: Request): ObjectRef {
  return { namespace: req.params.namespace, name: req.params.name };
}

/** Builds the portal's Express router over {@link portalRoutes}. */
export async function createRouter(options: PortalRouterOptions): Promise<express.Router> {
  const { service, httpAuth, auditor, pageTokens } = options;
  const credentials = (req: Request) => httpAuth.credentials(req, { allow: ['user', 'service'] });
  const body = (req: Request, schema: Parameters<typeof parseInput>[0]) =>
    parseInput(schema, req.body ?? {}, 'request body');
  /**
   * Parse → call → respond for every list (spec §9): the page token is opened against
   * this route, the filters and the caller before the call and sealed after it.
   */
  const list = async <K extends ListOperationId, F extends Record<string, string | undefined>>(
    req: Request,
    res: Response,
    route: K,
    call: (
      creds: BackstageCredentials,
      filters: F,
      page?: PageRequest,
    ) => Promise<Page<ListItem<K>>>,
  ) => {
    const {
      limit,
      continue: token,
      ...filters
    } = parseInput(portalOperations[route].query, req.query, 'query') as {
      limit?: number;
      continue?: string;
    } & F;
    const creds = await credentials(req);
    const binding = { route, filters: filters as F, credentials: creds };
    const page =
      limit === undefined
        ? undefined
        : {
            limit,
            cursor: token === undefined ? undefined : pageTokens.open(token, binding),
          };
    const { items, cursor } = await call(creds, filters as F, page);
    const next = pageTokens.seal(cursor, binding);
    const answer: ListPage<ListItem<K>> = {
      items,
      metadata: next === undefined ? {} : { continue: next },
    };
    res.status(portalOperations[route].status).json(answer);
  };

  const readOnlyList =
    (
      route: 'listHttpRoutes' | 'listPlanPolicies' | 'listAuthPolicies' | 'listRateLimitPolicies',
      kind: ReadOnlyKind,
    ): Handler =>
    (req, res) =>
      list(req, res, route, (c, f, p) => service.listReadOnly(c, kind, f, p));

  const review =
    (decision: 'approve' | 'reject'): Handler =>
    async (req, res) => {
      const operationId = `${decision}Request` as const;
      const { reason } = body(req, portalOperations[operationId].body);
      const ref = refOf(req);
      const creds = await credentials(req);
      const key = await auditor.run(
        {
          eventId: 'apikey-request-review',
          request: req,
          meta: { ...ref, decision },
        },
        () => service.reviewRequest(creds, ref, decision, reason),
      );
      respond(res, operationId, key);
    };

  const bulkReview =
    (decision: 'approve' | 'reject'): Handler =>
    async (req, res) => {
      const operationId = decision === 'approve' ? 'bulkApproveRequests' : 'bulkRejectRequests';
      const { requests, reason } = body(req, portalOperations[operationId].body);
      const creds = await credentials(req);
      const results = await auditor.run(
        {
          eventId: 'apikey-request-bulk-review',
          request: req,
          meta: { decision, requests },
          successMeta: outcomes => ({
            results: outcomes.map(r => ({
              namespace: r.namespace,
              name: r.name,
              statusCode: r.success ? 200 : r.error.statusCode,
            })),
          }),
        },
        () => service.bulkReview(creds, requests, decision, reason),
      );
      respond(res, operationId, { results });
    };

  const handlers: Record<PortalOperationId, Handler> = {
    async listApiProducts(req, res) {
      await list(req, res, 'listApiProducts', (c, f, p) => service.listProducts(c, f, p));
    },
    async getApiProduct(req, res) {
      respond(res, 'getApiProduct', await service.getProduct(await credentials(req), refOf(req)));
    },
    async createApiProduct(req, res) {
      const product = body(req, portalOperations.createApiProduct.body);
      const creds = await credentials(req);
      const created = await auditor.run(
        {
          eventId: 'apiproduct-create',
          request: req,
          meta: {
            namespace: product.metadata.namespace,
            name: product.metadata.name,
          },
        },
        () => service.createProduct(creds, product),
      );
      respond(res, 'createApiProduct', created);
    },
    async updateApiProduct(req, res) {
      const patch = body(req, portalOperations.updateApiProduct.body);
      const ref = refOf(req);
      const creds = await credentials(req);
      const updated = await auditor.run(
        {
          eventId: 'apiproduct-update',
          request: req,
          meta: { ...ref, fields: changedFields(patch) },
        },
        () => service.updateProduct(creds, ref, patch),
      );
      respond(res, 'updateApiProduct', updated);
    },
    async deleteApiProduct(req, res) {
      const ref = refOf(req);
      const creds = await credentials(req);
      await auditor.run({ eventId: 'apiproduct-delete', request: req, meta: { ...ref } }, () =>
        service.deleteProduct(creds, ref),
      );
      respond(res, 'deleteApiProduct', undefined);
    },
    listHttpRoutes: readOnlyList('listHttpRoutes', 'HTTPRoute'),
    listPlanPolicies: readOnlyList('listPlanPolicies', 'PlanPolicy'),
    async getPlanPolicy(req, res) {
      respond(
        res,
        'getPlanPolicy',
        await service.getPlanPolicy(await credentials(req), refOf(req)),
      );
    },
    listAuthPolicies: readOnlyList('listAuthPolicies', 'AuthPolicy'),
    listRateLimitPolicies: readOnlyList('listRateLimitPolicies', 'RateLimitPolicy'),
    async listRequests(req, res) {
      await list(req, res, 'listRequests', (c, f, p) =>
        service.listRequests(c, f as RequestQuery, p),
      );
    },
    async listMyRequests(req, res) {
      await list(req, res, 'listMyRequests', (c, f, p) => service.listMyRequests(c, f, p));
    },
    async createRequest(req, res) {
      const request = body(req, portalOperations.createRequest.body);
      const creds = await credentials(req);
      const key = await auditor.run(
        {
          eventId: 'apikey-request-create',
          request: req,
          meta: { product: request.apiProductRef, planTier: request.planTier },
          successMeta: created => ({
            ...created.metadata,
            phase: created.status?.phase ?? 'Pending',
          }),
        },
        () => service.createRequest(creds, request),
      );
      respond(res, 'createRequest', key);
    },
    bulkApproveRequests: bulkReview('approve'),
    bulkRejectRequests: bulkReview('reject'),
    async updateRequest(req, res) {
      const update = body(req, portalOperations.updateRequest.body);
      const ref = refOf(req);
      const creds = await credentials(req);
      const key = await auditor.run(
        {
          eventId: 'apikey-request-update',
          request: req,
          meta: { ...ref, fields: Object.keys(update) },
        },
        () => service.updateRequest(creds, ref, update),
      );
      respond(res, 'updateRequest', key);
    },
    async deleteRequest(req, res) {
      const ref = refOf(req);
      const { reason } = parseInput(portalOperations.deleteRequest.query, req.query, 'query');
      const creds = await credentials(req);
      await auditor.run(
        { eventId: 'apikey-request-delete', request: req, meta: { ...ref, reason } },
        () => service.deleteRequest(creds, ref, reason),
      );
      respond(res, 'deleteRequest', undefined);
    },
    async revokeRequest(req, res) {
      const { reason } = body(req, portalOperations.revokeRequest.body);
      const ref = refOf(req);
      const creds = await credentials(req);
      await auditor.run(
        {
          eventId: 'apikey-request-revoke',
          request: req,
          meta: { ...ref, reason },
          severityLevel: 'high',
        },
        () => service.revokeRequest(creds, ref, reason),
      );
      respond(res, 'revokeRequest', undefined);
    },
    approveRequest: review('approve'),
    rejectRequest: review('reject'),
    async listMcpGrants(req, res) {
      await list(req, res, 'listMcpGrants', (c, f, p) => service.listMcpGrants(c, f, p));
    },
    async getMcpGrant(req, res) {
      respond(res, 'getMcpGrant', await service.getMcpGrant(await credentials(req), refOf(req)));
    },
    async revealApiKeySecret(req, res) {
      const ref = refOf(req);
      const creds = await credentials(req);
      const apiKey = await auditor.run(
        {
          eventId: 'apikey-secret-reveal',
          request: req,
          meta: { ...ref },
          severityLevel: 'high',
        },
        () => service.revealSecret(creds, ref),
      );
      // A secret is shown once: nothing between here and the client may keep a copy.
      res.setHeader('Cache-Control', 'no-store');
      respond(res, 'revealApiKeySecret', { apiKey });
    },
  };

  const router = Router();
  router.use(
    jsonBody({
      timeoutMs: options.requestBodyTimeoutMs ?? DEFAULT_REQUEST_BODY_TIMEOUT_MS,
    }),
  );
  for (const route of portalRoutes) {
    router[route.method](route.path, handlers[route.operationId]);
  }
  // Past the routes: an error body, not Backstage's root 404 with none (what the fuzzer found).
  router.use((req, _res, next) =>
    next(
      new NotFoundError(
        `The portal has no ${req.method} operation at this path; see its README for the routes`,
      ),
    ),
  );
  router.use(retryAfterWhenUnavailable);
  return router;
}

/** The top-level fields a product patch touches, for the audit record. */
function changedFields(patch: { metadata?: object; spec?: object }): string[] {
  return [
    ...Object.keys(patch.metadata ?? {}).map(key => `metadata.${key}`),
    ...Object.keys(patch.spec ?? {}).map(key => `spec.${key}`),
  ];
}
