/*
 * Runs the modern (2026-07-28) example MCP server: `PORT` (default 3103), `HOST` (default
 * 127.0.0.1), `MCP_TOKEN` (optional).
 */
import { startModernExampleMcpServer } from './modernServer';

async function main() {
  const server = await startModernExampleMcpServer({
    port: Number(process.env.PORT ?? 3103),
    host: process.env.HOST,
    bearerToken: process.env.MCP_TOKEN,
  });
  process.stdout.write(`modern example MCP server listening on ${server.url}\n`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch(error => {
  process.stderr.write(`modern example MCP server failed to start: ${error}\n`);
  process.exit(1);
});
