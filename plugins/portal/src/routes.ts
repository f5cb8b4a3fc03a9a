/* The plugin's route refs in the new frontend system (the app binds and resolves them). */
import { createRouteRef } from '@backstage/frontend-plugin-api';

/** The portal page (`/portal` by default). @public */
export const rootRouteRef = createRouteRef();

/** The MCP tools page (`/mcp` by default). @public */
export const mcpRouteRef = createRouteRef();

/** The My connections page (`/connections` by default). @public */
export const connectionsRouteRef = createRouteRef();
