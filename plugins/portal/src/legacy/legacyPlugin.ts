/*
 * The legacy frontend system's plugin: the same pages, cards and APIs as the new system's, as
 * routable and component extensions.
 */
import {
  createComponentExtension,
  createPlugin,
  createRoutableExtension,
  createRouteRef,
} from '@backstage/core-plugin-api';
import type { JSX } from 'react';
import { mcpBrokerApiFactory, portalApiFactory } from '../apis/factories';

const legacyRootRouteRef = createRouteRef({ id: 'portal' });
const legacyMcpRouteRef = createRouteRef({ id: 'portal-mcp' });
const legacyConnectionsRouteRef = createRouteRef({ id: 'portal-connections' });

/**
 * The portal plugin for the legacy frontend system.
 *
 * @public
 */
export const portalPlugin = createPlugin({
  id: 'portal',
  routes: {
    root: legacyRootRouteRef,
    mcp: legacyMcpRouteRef,
    connections: legacyConnectionsRouteRef,
  },
  apis: [portalApiFactory, mcpBrokerApiFactory],
});

/** The portal page (legacy frontend system). @public */
export const PortalPage: () => JSX.Element = portalPlugin.provide(
  createRoutableExtension({
    name: 'PortalPage',
    component: () => import('../components/PortalPage/PortalPage').then(m => m.PortalPage),
    mountPoint: legacyRootRouteRef,
  }),
);

/** The MCP tools page (legacy frontend system). @public */
export const McpToolsPage: () => JSX.Element = portalPlugin.provide(
  createRoutableExtension({
    name: 'McpToolsPage',
    component: () => import('../components/McpTools/McpToolsRoutes').then(m => m.McpToolsRoutes),
    mountPoint: legacyMcpRouteRef,
  }),
);

/** My connections, the person's MCP credentials (legacy frontend system). @public */
export const ConnectionsPage: () => JSX.Element = portalPlugin.provide(
  createRoutableExtension({
    name: 'ConnectionsPage',
    component: () =>
      import('../components/Connections/ConnectionsPage').then(m => m.ConnectionsPage),
    mountPoint: legacyConnectionsRouteRef,
  }),
);

/**
 * The "API access" card for the API entity page (legacy frontend system). It links to the portal
 * page at `/portal`; pass `portalBasePath` when it is mounted elsewhere.
 *
 * @public
 */
export const EntityApiAccessCard: (props: { portalBasePath?: string }) => JSX.Element =
  portalPlugin.provide(
    createComponentExtension({
      name: 'EntityApiAccessCard',
      component: {
        lazy: () =>
          import('../components/ApiAccessCard/LegacyEntityApiAccessCard').then(
            m => m.LegacyEntityApiAccessCard,
          ),
      },
    }),
  );

/**
 * The "MCP server" card for the API entity page of an MCP server or endpoint (legacy frontend
 * system; show it where `isMcpServerEntity` holds). It links to the portal page at `/portal`;
 * pass `portalBasePath` when it is mounted elsewhere.
 *
 * @public
 */
export const EntityMcpServerCard: (props: { portalBasePath?: string }) => JSX.Element =
  portalPlugin.provide(
    createComponentExtension({
      name: 'EntityMcpServerCard',
      component: {
        lazy: () =>
          import('../components/McpServerCard/LegacyEntityMcpServerCard').then(
            m => m.LegacyEntityMcpServerCard,
          ),
      },
    }),
  );
