/*
 * The portal frontend plugin for Backstage's new frontend system: its two APIs (replaceable by
 * the app), the portal page, the MCP tools page and My connections (in the app's navigation), the
 * "API access" card on the API entities the portal's catalog module makes, and the "MCP server"
 * card on the ones the broker's catalog module makes. Wiring only.
 */
import { ApiBlueprint, createFrontendPlugin, PageBlueprint } from '@backstage/frontend-plugin-api';
import { EntityCardBlueprint } from '@backstage/plugin-catalog-react/alpha';
import { RiKey2Line, RiPlugLine, RiToolsLine } from '@remixicon/react';
import { mcpBrokerApiFactory, portalApiFactory } from './apis/factories';
import { isPortalApiEntity } from './components/ApiAccessCard/ApiAccessCard';
import { isMcpServerEntity } from './components/McpServerCard/McpServerCard';
import { connectionsRouteRef, mcpRouteRef, rootRouteRef } from './routes';

const portalApi = ApiBlueprint.make({
  name: 'portal',
  params: defineParams => defineParams(portalApiFactory),
});

const mcpBrokerApi = ApiBlueprint.make({
  name: 'mcp-broker',
  params: defineParams => defineParams(mcpBrokerApiFactory),
});

const portalPage = PageBlueprint.make({
  params: {
    path: '/portal',
    title: 'API portal',
    icon: <RiKey2Line />,
    routeRef: rootRouteRef,
    loader: () => import('./components/PortalPage/PortalPage').then(m => <m.PortalPage />),
  },
});

const mcpToolsPage = PageBlueprint.make({
  name: 'mcp',
  params: {
    path: '/mcp',
    title: 'MCP tools',
    icon: <RiToolsLine />,
    routeRef: mcpRouteRef,
    loader: () => import('./components/McpTools/McpToolsRoutes').then(m => <m.McpToolsRoutes />),
  },
});

const connectionsPage = PageBlueprint.make({
  name: 'connections',
  params: {
    path: '/connections',
    title: 'My connections',
    icon: <RiPlugLine />,
    routeRef: connectionsRouteRef,
    loader: () =>
      import('./components/Connections/ConnectionsPage').then(m => <m.ConnectionsPage />),
  },
});

const apiAccessCard = EntityCardBlueprint.make({
  name: 'api-access',
  params: {
    filter: isPortalApiEntity,
    loader: () =>
      import('./components/ApiAccessCard/EntityApiAccessCard').then(m => <m.EntityApiAccessCard />),
  },
});

const mcpServerCard = EntityCardBlueprint.make({
  name: 'mcp-server',
  params: {
    filter: isMcpServerEntity,
    loader: () =>
      import('./components/McpServerCard/EntityMcpServerCard').then(m => <m.EntityMcpServerCard />),
  },
});

/**
 * The portal frontend plugin (new frontend system). Install it with `yarn add` in an app that
 * discovers its packages (`app.packages: all`), or add it to the app's `features`.
 *
 * @public
 */
export default createFrontendPlugin({
  pluginId: 'portal',
  title: 'API portal',
  icon: <RiKey2Line />,
  routes: { root: rootRouteRef, mcp: mcpRouteRef, connections: connectionsRouteRef },
  extensions: [
    portalApi,
    mcpBrokerApi,
    portalPage,
    mcpToolsPage,
    connectionsPage,
    apiAccessCard,
    mcpServerCard,
  ],
});
