/*
 * Runs the two official MCP Apps example servers for `yarn start` (scripts/start-dev.mjs), each
 * in a child process on 127.0.0.1: `server-basic-vanillajs` on `VANILLA_PORT` (default 3105) and
 * `server-basic-react` on `REACT_PORT` (default 3106). Both register tool `get-time` rendering
 * `ui://get-time/mcp-app.html`, the clash the broker's MCP Apps walkthrough shows.
 */
import { startExampleAppServer } from './exampleAppServer';

Promise.all([
  startExampleAppServer('vanillajs', Number(process.env.VANILLA_PORT ?? 3105)),
  startExampleAppServer('react', Number(process.env.REACT_PORT ?? 3106)),
]).then(
  servers => {
    for (const server of servers) {
      process.stdout.write(`MCP App server ${server.kind} listening on ${server.url}\n`);
    }
    const stop = () =>
      Promise.all(servers.map(server => server.kill())).then(
        () => process.exit(0),
        () => process.exit(1),
      );
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  },
  error => {
    process.stderr.write(`MCP App servers failed to start: ${error}\n`);
    process.exit(1);
  },
);
