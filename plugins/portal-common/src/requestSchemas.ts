/*
 * What a client may send (spec §1, §4), as zod schemas: the router validates every body and
 * query with these, the request types of ./types.ts are inferred from them, and the backend's
 * openapi.yaml request schemas are generated from them, so validation, client types and the
 * document cannot drift. Every body schema is `.strict()`: an unknown field or one the server
 * owns (status, uid, resourceVersion, requestedBy, ...) is refused, naming the field. Query
 * schemas only pick the parameters they know: unknown query parameters are ignored.
 *
 * Safe in a browser bundle (zod only), so a frontend may check a form with the server's rules.
 */
import { z } from 'zod';
import { DEVPORTAL_API_VERSION, OWNER_ANNOTATION } from './constants';
import { mcpPlansInputSchema, targetRefInputSchema } from './mcpTargets';
import { apiKeyPhaseSchema, approvalModeSchema, publishStatusSchema } from './resourceSchemas';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const dns1123Label = z
  .string()
  .max(63)
  .regex(
    DNS1123_LABEL,
    'must be a DNS-1123 label: at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit',
  );

const rfc3339 = z.string().datetime({
  offset: true,
  message: 'must be an RFC 3339 timestamp, e.g. 2030-01-01T00:00:00Z',
});

const stringMap = z.record(z.string(), z.string());

const targetRefInput = targetRefInputSchema;

const documentationSchema = z
  .object({
    openAPISpecURL: z.string().url().optional(),
    docsURL: z.string().url().optional(),
  })
  .strict();

const contactSchema = z
  .object({
    email: z.string().email().optional(),
    team: z.string().max(253).optional(),
    url: z.string().url().optional(),
  })
  .strict();

const description = z.string().max(10_000);
const version = z.string().max(253);
const tags = z.array(z.string().min(1).max(253)).max(100);
const displayName = z.string().min(1).max(253);

/** `apiVersion` and `kind` are optional in bodies but must be right when sent. */
const typeFields = <K extends string>(kind: K) => ({
  apiVersion: z.literal(DEVPORTAL_API_VERSION).optional(),
  kind: z.literal(kind).optional(),
});

/** Body of `POST /apiproducts`. @public */
export const createApiProductSchema = z
  .object({
    ...typeFields('APIProduct'),
    metadata: z
      .object({
        namespace: dns1123Label,
        name: dns1123Label,
        labels: stringMap.optional(),
        annotations: stringMap
          .optional()
          .describe(
            '`backstage.io/owner` may name the caller or one of its groups (403 otherwise)',
          ),
      })
      .strict(),
    spec: z
      .object({
        displayName,
        description: description.optional(),
        version: version.optional(),
        targetRef: targetRefInput,
        plans: mcpPlansInputSchema
          .optional()
          .describe("an MCP product's plans (required for one, refused for an HTTPRoute product)"),
        approvalMode: approvalModeSchema.optional().describe('default: manual'),
        publishStatus: publishStatusSchema.optional().describe('default: Draft'),
        tags: tags.optional(),
        documentation: documentationSchema.optional(),
        contact: contactSchema.optional(),
      })
      .strict(),
  })
  .strict();

const nullableMembers = <T extends z.ZodRawShape>(shape: T) =>
  z
    .object(
      Object.fromEntries(
        Object.entries(shape).map(([key, schema]) => [
          key,
          (schema as z.ZodTypeAny).nullable().optional(),
        ]),
      ) as { [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>> },
    )
    .strict();

/**
 * Body of `PATCH /apiproducts/...`: a JSON merge patch. `null` removes optional fields;
 * `displayName` and `targetRef` cannot be removed.
 * @public
 */
export const apiProductPatchSchema = z
  .object({
    ...typeFields('APIProduct'),
    metadata: z
      .object({
        labels: z.record(z.string(), z.string().nullable()).nullable().optional(),
        annotations: z
          .object({ [OWNER_ANNOTATION]: z.string().min(1) })
          .strict()
          .optional(),
        resourceVersion: z.string().optional().describe('precondition; 409 on mismatch'),
      })
      .strict()
      .optional(),
    spec: z
      .object({
        displayName: displayName.optional(),
        description: description.nullable().optional(),
        version: version.nullable().optional(),
        targetRef: targetRefInput.optional(),
        plans: mcpPlansInputSchema.optional().describe('replaces the whole list (MCP products)'),
        approvalMode: approvalModeSchema.nullable().optional(),
        publishStatus: publishStatusSchema.nullable().optional(),
        tags: tags.nullable().optional(),
        documentation: nullableMembers({
          openAPISpecURL: z.string().url(),
          docsURL: z.string().url(),
        })
          .nullable()
          .optional(),
        contact: nullableMembers({
          email: z.string().email(),
          team: z.string().max(253),
          url: z.string().url(),
        })
          .nullable()
          .optional(),
      })
      .strict()
      .optional()
      .describe('Any APIProductSpec field; null removes an optional one'),
  })
  .strict();

/** A `{namespace, name}` reference in a body. @public */
export const objectRefSchema = z
  .object({ namespace: dns1123Label, name: z.string().min(1).max(253) })
  .strict();
const planTier = z.string().min(1).max(253);
const useCase = z.string().max(1000);
const reason = z.string().max(1000);

/** Body of `POST /requests`. @public */
export const createApiKeyRequestSchema = z
  .object({
    apiProductRef: objectRefSchema,
    planTier,
    useCase: useCase.optional(),
    email: z.string().email().optional(),
    expiresAt: rfc3339.optional().describe('RFC 3339, in the future'),
  })
  .strict();

/** Body of `PATCH /requests/...`; `expiresAt: null` clears it. @public */
export const updateApiKeyRequestSchema = z
  .object({
    planTier: planTier.optional(),
    useCase: useCase.optional(),
    expiresAt: rfc3339.nullable().optional().describe('null clears it'),
  })
  .strict();

/** Body of approve and reject (optional). @public */
export const reviewSchema = z.object({ reason: reason.optional() }).strict();

/**
 * Query of `DELETE /requests/:namespace/:name`: an optional `reason` (up to 1000 characters)
 * the requester is told when someone else (an admin) revokes or deletes their key.
 * @public
 */
export const deleteRequestQuerySchema = z.object({ reason: optionalQueryValue(reason) });

/** Most items one bulk call may name. @public */
export const MAX_BULK_ITEMS = 100;

/** Body of `bulk-approve` and `bulk-reject`: 1–100 distinct requests. @public */
export const bulkReviewSchema = z
  .object({
    requests: z
      .array(objectRefSchema)
      .min(1)
      .max(MAX_BULK_ITEMS)
      .describe('each request named once (400 for a duplicate)'),
    reason: reason.optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    const seen = new Map<string, number>();
    body.requests.forEach((ref, index) => {
      const key = `${ref.namespace}/${ref.name}`;
      const first = seen.get(key);
      if (first !== undefined) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['requests', index],
          message: `duplicates requests[${first}] (${key}); name each request once`,
        });
      } else {
        seen.set(key, index);
      }
    });
  });

/**
 * An optional query parameter; an empty value (`?status=`, as in the spec's
 * `/requests?status=&namespace=`) means "not given", like an absent one.
 */
function optionalQueryValue<T extends z.ZodTypeAny>(schema: T) {
  return z.preprocess(value => (value === '' ? undefined : value), schema.optional());
}

/** The largest page a list answers (spec §9). @public */
export const MAX_PAGE_LIMIT = 1000;
/** Longer `continue` values cannot be ours: refused before any decoding. */
const MAX_CONTINUE_LENGTH = 4096;

/** `limit` and `continue` of every list (spec §9); `continue` needs `limit`. */
const pageQueryFields = {
  limit: optionalQueryValue(
    z
      .string()
      .regex(/^\d+$/, `must be an integer from 1 to ${MAX_PAGE_LIMIT}`)
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(1, `must be an integer from 1 to ${MAX_PAGE_LIMIT}`)
          .max(MAX_PAGE_LIMIT, `must be an integer from 1 to ${MAX_PAGE_LIMIT}`),
      ),
  ),
  continue: optionalQueryValue(
    z.string().max(MAX_CONTINUE_LENGTH, 'is not a continue token of this portal'),
  ),
};

/** Refuses `continue` without `limit`: a token continues a walk of pages of one size. */
function continueNeedsLimit(query: { limit?: number; continue?: string }) {
  return query.continue === undefined || query.limit !== undefined;
}
const CONTINUE_NEEDS_LIMIT = {
  message: 'continue needs limit: send the page size again with the token from the previous page',
  path: ['continue'],
};

/** The rules of a paged list filtered by product: `continue` needs `limit`, `product` needs `namespace`. */
function checkPagedProductQuery(
  query: { limit?: number; continue?: string; product?: string; namespace?: string },
  ctx: z.RefinementCtx,
) {
  if (!continueNeedsLimit(query)) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, ...CONTINUE_NEEDS_LIMIT });
  }
  if (query.product !== undefined && query.namespace === undefined) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: 'product needs namespace: a product is named within its namespace',
      path: ['product'],
    });
  }
}

/** Refuses `targetName` without `targetKind`: a target is named within its kind. */
function checkTargetNameHasKind(
  query: { targetKind?: string; targetName?: string },
  ctx: z.RefinementCtx,
  kinds: string,
) {
  if (query.targetName !== undefined && query.targetKind === undefined) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: `targetName needs targetKind (${kinds})`,
      path: ['targetName'],
    });
  }
}

/** A full entity ref, `kind:namespace/name` (compared in lower case, as Backstage stores them). */
const ENTITY_REF = /^[A-Za-z0-9][-A-Za-z0-9_.]*:[A-Za-z0-9][-A-Za-z0-9_.]*\/[-A-Za-z0-9_.]+$/;
const ENTITY_REF_MESSAGE = 'must be a full entity ref such as user:default/alice';
/** The most refs one `owner` filter names. */
const MAX_OWNER_REFS = 50;

/** A user's entity ref in a query (`requester`). */
const entityRefQueryValue = z
  .string()
  .max(253)
  .regex(ENTITY_REF, ENTITY_REF_MESSAGE)
  .transform(ref => ref.toLowerCase());

/**
 * `owner`: entity refs separated by commas (a person and their groups), any of which may own
 * the product. Kept as one normalised string (the page token binds the filters as strings).
 */
const ownerQueryValue = z
  .string()
  .max(MAX_OWNER_REFS * 254)
  .refine(
    value => value.split(',').length <= MAX_OWNER_REFS,
    `names at most ${MAX_OWNER_REFS} entity refs`,
  )
  .refine(
    value => value.split(',').every(ref => ENTITY_REF.test(ref.trim())),
    `${ENTITY_REF_MESSAGE}, several separated by commas (e.g. user:default/bob,group:default/payments-team)`,
  )
  .transform(value =>
    value
      .split(',')
      .map(ref => ref.trim().toLowerCase())
      .join(','),
  );

/** The refs of an `owner` query value (see {@link requestListQuerySchema}). @public */
export function ownerRefsOfQuery(owner: string | undefined): string[] | undefined {
  return owner === undefined ? undefined : owner.split(',');
}

/**
 * Query of `GET /requests`: `status` (phase), `namespace`, `product` (a product's name;
 * needs `namespace`), `owner` (the product's owner: entity refs separated by commas, any of
 * which matches) and `requester` (the requesting user's entity ref); all given must hold.
 * @public
 */
export const requestListQuerySchema = z
  .object({
    status: optionalQueryValue(apiKeyPhaseSchema),
    namespace: optionalQueryValue(dns1123Label),
    product: optionalQueryValue(dns1123Label),
    owner: optionalQueryValue(ownerQueryValue),
    requester: optionalQueryValue(entityRefQueryValue),
    ...pageQueryFields,
  })
  // One refinement (the OpenAPI generator reads the object inside one layer of effects).
  .superRefine((query, ctx) => {
    checkPagedProductQuery(query, ctx);
  });

/**
 * Query of `GET /mcp/grants` (contract mcp-access §4.8): `namespace`, `product` (needs
 * `namespace`), `targetKind` and `targetName` (needs `targetKind`), `subject` (a user's
 * entity ref); all given must hold.
 * @public
 */
export const mcpGrantListQuerySchema = z
  .object({
    namespace: optionalQueryValue(dns1123Label),
    product: optionalQueryValue(dns1123Label),
    targetKind: optionalQueryValue(z.enum(['MCPServer', 'MCPEndpoint'])),
    targetName: optionalQueryValue(z.string().min(1).max(253)),
    subject: optionalQueryValue(entityRefQueryValue),
    ...pageQueryFields,
  })
  .superRefine((query, ctx) => {
    checkPagedProductQuery(query, ctx);
    checkTargetNameHasKind(query, ctx, 'MCPServer or MCPEndpoint');
  });

/** The kinds of target a product may have, as the `targetKind` of a product list names them. */
const productTargetKind = z.enum(['HTTPRoute', 'MCPServer', 'MCPEndpoint'], {
  errorMap: () => ({ message: 'must be HTTPRoute, MCPServer or MCPEndpoint' }),
});

/**
 * Query of `GET /apiproducts`: `namespace`, `owner` (entity refs separated by commas, any of
 * which owns the product), `targetKind` and `targetName` (needs `targetKind`): only the
 * products that expose that kind of target, or that one target (contract mcp-access §4.8).
 * @public
 */
export const productListQuerySchema = z
  .object({
    namespace: optionalQueryValue(dns1123Label),
    owner: optionalQueryValue(ownerQueryValue),
    targetKind: optionalQueryValue(productTargetKind),
    targetName: optionalQueryValue(z.string().min(1).max(253)),
    ...pageQueryFields,
  })
  // One refinement (the OpenAPI generator reads the object inside one layer of effects).
  .superRefine((query, ctx) => {
    if (!continueNeedsLimit(query)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, ...CONTINUE_NEEDS_LIMIT });
    }
    checkTargetNameHasKind(query, ctx, 'HTTPRoute, MCPServer or MCPEndpoint');
  });

/** Query of the other lists. @public */
export const namespaceQuerySchema = z
  .object({
    namespace: optionalQueryValue(dns1123Label),
    ...pageQueryFields,
  })
  .refine(continueNeedsLimit, CONTINUE_NEEDS_LIMIT);
