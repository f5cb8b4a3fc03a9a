import { SchedulerServiceTaskScheduleDefinitionConfig } from '@backstage/backend-plugin-api';

export interface Config {
  catalog?: {
    providers?: {
      /**
       * The MCP broker entity provider (`@devportal/plugin-catalog-backend-module-mcp-broker`):
       * it publishes the broker's servers as catalog entities of kind API, type `mcp-server`.
       */
      mcpBroker?: {
        /**
         * How often the full synchronisation runs (it also runs at start-up; events from the
         * broker bring single changes in between). Default: every 30 minutes, at most 3 minutes
         * a run, with an initial delay of 5 seconds.
         */
        schedule?: SchedulerServiceTaskScheduleDefinitionConfig;
        /**
         * The address of a server's MCP tools page, for the entity's `mcp-tools` link: `{name}`
         * is replaced (URL-encoded); relative addresses are resolved against `app.baseUrl`.
         * Endpoints use `?endpoint=` in place of `?server=`. Default `/mcp?server={name}`.
         */
        toolsPageUrlTemplate?: string;
        /**
         * The owner of servers the broker names no owner for (an entity ref; the kind defaults
         * to `group`). Default `group:default/mcp-admins`.
         */
        defaultOwner?: string;
      };
    };
  };
}
