import { SchedulerServiceTaskScheduleDefinitionConfig } from '@backstage/backend-plugin-api';

export interface Config {
  catalog?: {
    providers?: {
      /**
       * The portal entity provider (`@devportal/plugin-catalog-backend-module-portal`): it
       * publishes the portal's Published API Products as catalog entities of kind API.
       */
      portal?: {
        /**
         * How often the full synchronisation runs (it also runs at start-up; events from
         * the portal bring single changes in between). Default: every 30 minutes, at most
         * 3 minutes a run, with an initial delay of 5 seconds.
         */
        schedule?: SchedulerServiceTaskScheduleDefinitionConfig;
        /**
         * The address of a product in the portal's frontend, for the entity's links:
         * `{namespace}` and `{name}` are replaced (URL-encoded). Relative addresses are
         * resolved against `app.baseUrl`. Default `/portal/products/{namespace}/{name}`.
         */
        productUrlTemplate?: string;
      };
    };
  };
}
