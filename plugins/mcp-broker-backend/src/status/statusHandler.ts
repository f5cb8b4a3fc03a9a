/* GET /status: what an operator needs to see whether each backend is reachable and current. */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type { Request, Response } from 'express';
import type { McpBroker } from '../broker/mcpBroker';

/** Answers the broker status (authenticated: user or service). */
export function statusHandler(deps: { broker: McpBroker; httpAuth: HttpAuthService }) {
  return async (req: Request, res: Response) => {
    await deps.httpAuth.credentials(req, { allow: ['user', 'service'] });
    res.json(deps.broker.status());
  };
}
