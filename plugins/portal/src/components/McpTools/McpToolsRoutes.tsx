/*
 * The routes of the MCP tools page extension (`page:portal/mcp`, mounted at `/mcp` by
 * default): the tools themselves, and the usage pages below it (contract mcp-access §8) —
 * `usage` (my MCP usage), `servers` (my servers' usage) and `servers/:server/usage` (who uses
 * one server).
 */
import { Route, Routes } from 'react-router-dom';
import { McpToolsPage } from './McpToolsPage';
import { MyUsagePage } from '../McpUsage/MyUsagePage';
import { ServerUsageListPage } from '../McpUsage/ServerUsageListPage';
import { ServerUsagePage } from '../McpUsage/ServerUsagePage';

/** The MCP tools page and its usage sub-pages. */
export function McpToolsRoutes() {
  return (
    <Routes>
      <Route index element={<McpToolsPage />} />
      <Route path="usage" element={<MyUsagePage />} />
      <Route path="servers" element={<ServerUsageListPage />} />
      <Route path="servers/:server/usage" element={<ServerUsagePage />} />
      <Route path="*" element={<McpToolsPage />} />
    </Routes>
  );
}
