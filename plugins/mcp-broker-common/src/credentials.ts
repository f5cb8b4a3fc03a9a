/*
 * The person's own credentials for servers that take one (spec §11), under `/api/mcp-broker`:
 * `GET /credentials` lists names and dates (never a value), `PUT /credentials/:server` stores or
 * replaces one, `DELETE /credentials/:server` deletes it. Writes come only from the person's
 * browser (Backstage's sign-in cookie and the app's `Origin`), never with a bearer token.
 */
import { z } from 'zod';

/**
 * A server that takes a personal credential, or one the person still has a credential stored
 * for. Never the value.
 *
 * @public
 */
export const mcpConnectionSchema = z.object({
  /** The server name. */
  server: z.string(),
  /** True when the person has a credential stored for it. */
  stored: z.boolean(),
  /** False for a stored credential whose server no longer takes one (it is never used). */
  inUse: z.boolean(),
  /** What to store, from the server's configuration. */
  description: z.string().optional(),
  /** ISO 8601, when stored. */
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});

/** One of the person's connections; see {@link mcpConnectionSchema}. @public */
export type McpConnection = z.infer<typeof mcpConnectionSchema>;

/** The body of `GET /credentials`. @public */
export const mcpConnectionListSchema = z.object({ items: z.array(mcpConnectionSchema) });

/** The body of `PUT /credentials/:server`: the credential, and the elicitation it completes. @public */
export const mcpCredentialBodySchema = z
  .object({
    value: z.string({
      required_error: 'value is required',
      invalid_type_error: 'value must be a string',
    }),
    elicitationId: z.string({ invalid_type_error: 'elicitationId must be a string' }).optional(),
  })
  .strict();

/** The answer of `PUT /credentials/:server`: when it was first stored and last replaced. @public */
export const mcpCredentialStoredSchema = z.object({
  server: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
