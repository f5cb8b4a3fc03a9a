/*
 * Links from the portal's pages to pages of other plugins and extensions of the app: the MCP
 * tools page (this plugin's `page:portal/mcp`, which the app may move), the portal page (for
 * the MCP tools page, which is outside it) and a catalog entity's
 * page. Resolved through the new frontend system's route resolution; an app without it (the
 * legacy system) or without the catalog gets Backstage's default paths.
 */
import { routeResolutionApiRef, useApiHolder } from '@backstage/frontend-plugin-api';
import { convertLegacyRouteRef } from '@backstage/core-compat-api';
import { entityRouteRef } from '@backstage/plugin-catalog-react';
import { parseEntityRef } from '@backstage/catalog-model';
import { useMemo } from 'react';
import { portalPaths, type PortalPaths } from '../components/PortalPage/portalPaths';
import { mcpRouteRef, rootRouteRef } from '../routes';

/** Where the portal's pages link to outside the portal page. */
export interface AppLinks {
  /** The MCP tools page, e.g. `/mcp`. */
  mcpTools: string;
  /** My MCP usage (`/mcp/usage`, a sub-route of the MCP tools page). */
  mcpUsage: string;
  /** My servers' usage (`/mcp/servers`), for owners. */
  mcpServersUsage: string;
  /** Who uses one server (`/mcp/servers/example/usage`). */
  mcpServerUsage: (server: string) => string;
  /** The MCP tools page scrolled to one server (`/mcp?server=example`). */
  mcpServer: (server: string) => string;
  /** The portal page's paths (for pages outside it, such as the MCP tools page). */
  portal: PortalPaths;
  /** A catalog entity's page, e.g. `/catalog/default/api/mcp-server-example`. */
  entity: (entityRef: string) => string;
}

const entityRoute = convertLegacyRouteRef(entityRouteRef);

/** The app's links (default paths where the app cannot resolve them). */
export function useAppLinks(): AppLinks {
  const routes = useApiHolder().get(routeResolutionApiRef);
  return useMemo(() => {
    const resolve = <T>(resolver: () => T | undefined) => {
      try {
        return resolver();
      } catch {
        // An unbound route: the default path below.
        return undefined;
      }
    };
    const mcpTools = (resolve(() => routes?.resolve(mcpRouteRef)?.()) ?? '/mcp').replace(/\/$/, '');
    const entityPage = resolve(() => routes?.resolve(entityRoute));
    const portal = portalPaths(resolve(() => routes?.resolve(rootRouteRef)?.()) ?? '/portal');
    return {
      portal,
      mcpTools,
      mcpUsage: `${mcpTools}/usage`,
      mcpServersUsage: `${mcpTools}/servers`,
      mcpServerUsage: server => `${mcpTools}/servers/${encodeURIComponent(server)}/usage`,
      mcpServer: server => `${mcpTools}?server=${encodeURIComponent(server)}`,
      entity: entityRef => {
        const { kind, namespace, name } = parseEntityRef(entityRef);
        const params = { kind: kind.toLowerCase(), namespace, name };
        return (
          resolve(() => entityPage?.(params)) ??
          `/catalog/${encodeURIComponent(namespace)}/${encodeURIComponent(
            params.kind,
          )}/${encodeURIComponent(name)}`
        );
      },
    };
  }, [routes]);
}
