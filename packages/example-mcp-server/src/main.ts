/* Runs the example MCP server: `PORT` (default 3101), `HOST` (default 127.0.0.1), `MCP_TOKEN` (optional). */
import { startExampleMcpServer } from './server';

async function main() {
  const server = await startExampleMcpServer({
    port: Number(process.env.PORT ?? 3101),
    host: process.env.HOST,
    bearerToken: process.env.MCP_TOKEN,
  });
  process.stdout.write(`example MCP server listening on ${server.url}\n`);
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
  process.stderr.write(`example MCP server failed to start: ${error}\n`);
  process.exit(1);
});
