/*
 * Binds a handler to one entry of the broker's REST table (`brokerOperations` in
 * @devportal/plugin-mcp-broker-common): the method and path come from the entry, and so do the
 * schemas the path parameters, query and body are validated with, here and nowhere else. A bad
 * value is an `InputError` (400, `@backstage/errors` body) naming the parameter; the handler
 * gets the parsed values, returns the answer, and this function sends it with the entry's
 * status. Routers stay parse → call → respond with the parse step written once.
 */
import { InputError } from '@backstage/errors';
import {
  brokerOperations,
  type BrokerOperationId,
  type BrokerOperationResponse,
} from '@devportal/plugin-mcp-broker-common';
import type express from 'express';
import type { z } from 'zod';

type Entry<K extends BrokerOperationId> = (typeof brokerOperations)[K];
/** The parsed value of one of an entry's schemas (`undefined` when the entry has none). */
type Parsed<K extends BrokerOperationId, F extends string> =
  Entry<K> extends { [P in F]: infer S extends z.ZodTypeAny } ? z.output<S> : undefined;

/** What a bound handler gets: the request, parsed. */
export interface OperationInput<K extends BrokerOperationId> {
  req: express.Request;
  res: express.Response;
  params: Parsed<K, 'params'>;
  query: Parsed<K, 'query'>;
  body: Parsed<K, 'body'>;
}

/** A handler of one operation: returns the answer (`void` for a 204). */
export type OperationHandler<K extends BrokerOperationId> = (
  input: OperationInput<K>,
) => Promise<BrokerOperationResponse<K>>;

/** Options of {@link bindBrokerOperation}. */
export interface BindOptions {
  /** Middleware run before validation (a body parser, a content-type check). */
  before?: express.RequestHandler[];
}

/** Registers `handler` on `router` at the method and path of `brokerOperations[operationId]`. */
export function bindBrokerOperation<K extends BrokerOperationId>(
  router: express.Router,
  operationId: K,
  handler: OperationHandler<K>,
  options: BindOptions = {},
): void {
  const operation: Entry<K> & {
    params?: z.ZodTypeAny;
    query?: z.ZodTypeAny;
    body?: z.ZodTypeAny;
  } = brokerOperations[operationId];
  router[operation.method](
    operation.path,
    ...(options.before ?? []),
    async (req: express.Request, res: express.Response) => {
      const input = {
        req,
        res,
        params: parse(operation.params, req.params, 'path'),
        query: parse(operation.query, req.query, 'query'),
        body: parse(operation.body, req.body ?? {}, 'body'),
      } as OperationInput<K>;
      const answer = await handler(input);
      if (operation.status === 204) {
        res.status(204).end();
      } else {
        res.status(operation.status).json(answer);
      }
    },
  );
}

/** `input` parsed by `schema` (undefined without one), or an InputError naming each problem. */
function parse(schema: z.ZodTypeAny | undefined, input: unknown, what: string): unknown {
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const allowed = Object.keys((schema as z.AnyZodObject).shape ?? {}).join(', ');
  const problems = parsed.error.issues.map(issue => {
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map(key => `"${key.slice(0, 40)}"`).join(', ');
      return `unknown ${what === 'body' ? 'field' : `${what} parameter`} ${keys} (allowed: ${allowed})`;
    }
    // Custom messages name their parameter; zod's own ("Required") get its path in front.
    const field = issue.path.join('.');
    return field === '' || issue.message.includes(String(issue.path[0]))
      ? issue.message
      : `${field}: ${issue.message}`;
  });
  throw new InputError(`Invalid ${what}: ${problems.join('; ')}`);
}
