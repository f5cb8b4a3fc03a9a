/* GET /status: what an operator needs to see whether each backend is reachable and current. */
import type { Request, Response } from 'express';
import type { McpBroker } from '../broker/mcpBroker';

/** Answers the broker status (authenticated by the router's requirePrincipal: user or service). */
export function statusHandler(deps: { broker: McpBroker }) {
  return async (_req: Request, res: Response) => {
    res.json(deps.broker.status());
  };
}
