/*
 * Runs the modern (2026-07-28) example MCP server: `PORT` (default 3103), `HOST` (default
 * 127.0.0.1), `MCP_TOKEN` (optional).
 */
import { startModernExampleMcpServer } from './modernServer';
import { runServerProcess } from './serving';

runServerProcess('modern example MCP server', 3103, startModernExampleMcpServer);
