/*
 * Runs the tasks fixture's 2025-11-25 half as the development `jobs` MCP server of `yarn start`
 * (scripts/start-dev.mjs): `PORT` (default 3104, on 127.0.0.1), `DEPLOY_SECONDS` (default 15: how
 * long each `deploy` runs before it completes on its own).
 */
import { DEVELOPMENT_DEPLOY_DURATION_MS, startTasksServer } from './tasksServer';

startTasksServer({
  port: Number(process.env.PORT ?? 3104),
  deployDurationMs:
    process.env.DEPLOY_SECONDS === undefined
      ? DEVELOPMENT_DEPLOY_DURATION_MS
      : Number(process.env.DEPLOY_SECONDS) * 1000,
}).then(
  server => {
    process.stdout.write(`jobs MCP server (2025-11-25, tasks) listening on ${server.url}\n`);
    const stop = () =>
      server.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  },
  error => {
    process.stderr.write(`jobs MCP server failed to start: ${error}\n`);
    process.exit(1);
  },
);
