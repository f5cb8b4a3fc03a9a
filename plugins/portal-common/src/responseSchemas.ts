/*
 * The answers of the portal's routes around its records (./resourceSchemas.ts): list pages
 * (spec §9), bulk results, the one-time secret and the error body every 4xx/5xx carries. Like
 * the records, these are the source of the client's return types and of the document's
 * response schemas; the server builds them and does not parse them.
 *
 * A schema used inside another is written `x as typeof x`, so that declarations (and the API
 * report) name it instead of repeating its whole type.
 */
import { z } from 'zod';
import {
  apiKeySchema,
  apiProductSchema,
  mcpGrantSchema,
  readOnlyObjectSchema,
} from './resourceSchemas';

/** Paging state of a list answer. @public */
export const listMetadataSchema = z
  .object({
    continue: z
      .string()
      .optional()
      .describe('Present exactly when more items follow; send it as `continue`.'),
  })
  .describe('Paging state of a list answer.');

/**
 * A list answer, whole or one page: `{items, metadata: {continue?}}`.
 * @public
 */
export function listPageSchema<T extends z.ZodTypeAny>(item: T) {
  return z.object({
    items: z.array(item),
    metadata: listMetadataSchema as typeof listMetadataSchema,
  });
}

/** The schema of a list page of `T` (the type of {@link listPageSchema}). @public */
export type ListPageSchema<T extends z.ZodTypeAny> = ReturnType<typeof listPageSchema<T>>;

/** A page of API products. @public */
export const apiProductListSchema: ListPageSchema<typeof apiProductSchema> =
  listPageSchema(apiProductSchema);

/** A page of API key requests (never their secrets). @public */
export const apiKeyListSchema: ListPageSchema<typeof apiKeySchema> = listPageSchema(apiKeySchema);

/** A page of live access grants (contract mcp-access §4.8). @public */
export const mcpGrantListSchema: ListPageSchema<typeof mcpGrantSchema> =
  listPageSchema(mcpGrantSchema);

/** A page of read-only objects. @public */
export const readOnlyObjectListSchema: ListPageSchema<typeof readOnlyObjectSchema> =
  listPageSchema(readOnlyObjectSchema);

const bulkItemRef = () => ({ namespace: z.string(), name: z.string() });

/** One item of a bulk answer, in input order: the key, or why this one failed. @public */
export const bulkReviewResultSchema = z.discriminatedUnion('success', [
  z.object({
    ...bulkItemRef(),
    success: z.literal(true),
    apiKey: apiKeySchema as typeof apiKeySchema,
  }),
  z.object({
    ...bulkItemRef(),
    success: z.literal(false),
    error: z.object({ name: z.string(), message: z.string(), statusCode: z.number().int() }),
  }),
]);

/** The answer of `bulk-approve` and `bulk-reject`. @public */
export const bulkReviewResponseSchema: z.ZodObject<{
  results: z.ZodArray<typeof bulkReviewResultSchema>;
}> = z.object({ results: z.array(bulkReviewResultSchema) });

/** The answer of the one-time secret read. @public */
export const apiKeySecretSchema = z.object({ apiKey: z.string() });

/**
 * The body of every error answer (`@backstage/errors`' `ErrorResponseBody`, as Backstage's
 * error middleware writes it).
 * @public
 */
export const errorResponseBodySchema = z.object({
  error: z.object({ name: z.string(), message: z.string() }),
  request: z.object({ method: z.string(), url: z.string() }).partial(),
  response: z.object({ statusCode: z.number().int() }).partial(),
});
