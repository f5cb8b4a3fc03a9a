/* Runs the example MCP server: `PORT` (default 3101), `HOST` (default 127.0.0.1), `MCP_TOKEN` (optional). */
import { startExampleMcpServer } from './server';
import { runServerProcess } from './serving';

runServerProcess('example MCP server', 3101, startExampleMcpServer);
