/*
 * The usage routes (docs/contracts/mcp-access.md §7.3), under /api/mcp-broker:
 *   GET /usage/my?days=&server=                        the caller's own usage and live grants
 *   GET /usage/servers?days=                           each server's totals the caller may read
 *   GET /usage/servers/:server?days=&limit=&continue=  one server per day and tool, its people
 * `days` is a whole number 1–400 (default 30): the UTC days ending today, inclusive. `limit` is
 * 1–1000 (default 100). Any other query parameter, or a malformed one, is a 400 naming it.
 * Parse → call → respond: who may ask what is AuthorizedUsageService's, the answers
 * DefaultUsageService's. Backstage's barrier authenticates these paths (401 without a token).
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import type express from 'express';
import Router from 'express-promise-router';
import { z } from 'zod';
import { isValidServerName } from '../config';
import type { UsageService } from '../usage/UsageService';

/** Default and bounds of `days`. */
export const USAGE_DAYS = { default: 30, min: 1, max: 400 } as const;
/** Default and bounds of `limit`. */
export const USAGE_PAGE_LIMIT = { default: 100, min: 1, max: 1000 } as const;

/** Dependencies of {@link createUsageRouter}. */
export interface UsageRouterOptions {
  httpAuth: HttpAuthService;
  usage: UsageService;
}

/** A whole number from a query string, within bounds, named in its message. */
function wholeNumber(name: string, bounds: { default: number; min: number; max: number }) {
  const message = `${name} must be a whole number from ${bounds.min} to ${bounds.max}`;
  return z
    .string({ invalid_type_error: `${name} must be given once` })
    .regex(/^\d{1,4}$/, message)
    .transform(Number)
    .pipe(z.number().min(bounds.min, message).max(bounds.max, message))
    .default(String(bounds.default));
}

const serverName = z
  .string({ invalid_type_error: 'server must be given once' })
  .refine(isValidServerName, 'server must be a server name: lower-case letters, digits and "-"');

const days = wholeNumber('days', USAGE_DAYS);
const myQuery = z.object({ days, server: serverName.optional() }).strict();
const listQuery = z.object({ days }).strict();
const serverQuery = z
  .object({
    days,
    limit: wholeNumber('limit', USAGE_PAGE_LIMIT),
    continue: z.string({ invalid_type_error: 'continue must be given once' }).optional(),
  })
  .strict();

/** The query of `req` by `schema`, or an InputError naming each problem. */
function parseQuery<T extends z.ZodTypeAny>(schema: T, req: express.Request): z.output<T> {
  const parsed = schema.safeParse(req.query);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(issue =>
    issue.code === 'unrecognized_keys'
      ? `unknown query parameter ${issue.keys.map(key => `"${key.slice(0, 40)}"`).join(', ')} (allowed: ${Object.keys((schema as unknown as z.AnyZodObject).shape).join(', ')})`
      : issue.message,
  );
  throw new InputError(`Invalid query: ${problems.join('; ')}`);
}

/** Builds the router of the usage routes; see the file comment. */
export function createUsageRouter(options: UsageRouterOptions): express.Router {
  const { httpAuth, usage } = options;
  const router = Router();

  router.get('/usage/my', async (req, res) => {
    const query = parseQuery(myQuery, req);
    const credentials = await httpAuth.credentials(req, { allow: ['user', 'service'] });
    res.json(await usage.myUsage(credentials, query));
  });

  router.get('/usage/servers', async (req, res) => {
    const query = parseQuery(listQuery, req);
    const credentials = await httpAuth.credentials(req, { allow: ['user', 'service'] });
    res.json(await usage.listServers(credentials, query));
  });

  router.get('/usage/servers/:server', async (req, res) => {
    const { server } = req.params;
    if (!isValidServerName(server)) {
      throw new InputError(
        'The server name in /usage/servers/:server must use lower-case letters, digits and "-"',
      );
    }
    const query = parseQuery(serverQuery, req);
    const credentials = await httpAuth.credentials(req, { allow: ['user', 'service'] });
    res.json(await usage.serverUsage(credentials, server, query));
  });
  return router;
}
