/*
 * The development MCP servers of `yarn start` (scripts/start-dev.mjs) that are these fixtures, in
 * one process (each extra process slows the backend's start on a busy machine), all on 127.0.0.1:
 * - the tasks fixture's 2025-11-25 half as the `jobs` server on `JOBS_PORT` (default 3104), whose
 *   `deploy` completes on its own after `DEPLOY_SECONDS` (default 15);
 * - the two official MCP Apps example servers, each in a child process: `server-basic-vanillajs`
 *   on `VANILLA_PORT` (default 3105) and `server-basic-react` on `REACT_PORT` (default 3106). Both
 *   register tool `get-time` rendering `ui://get-time/mcp-app.html`, the clash the broker's MCP
 *   Apps walkthrough shows.
 * SIGINT/SIGTERM stop them all.
 */
import { startExampleAppServer } from './exampleAppServer';
import { DEVELOPMENT_DEPLOY_DURATION_MS, startTasksServer } from './tasksServer';

const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

async function main(): Promise<Array<() => Promise<void>>> {
  const stops: Array<() => Promise<void>> = [];
  try {
    const jobs = await startTasksServer({
      port: port('JOBS_PORT', 3104),
      deployDurationMs:
        process.env.DEPLOY_SECONDS === undefined
          ? DEVELOPMENT_DEPLOY_DURATION_MS
          : Number(process.env.DEPLOY_SECONDS) * 1000,
    });
    stops.push(() => jobs.close());
    process.stdout.write(`jobs MCP server (2025-11-25, tasks) listening on ${jobs.url}\n`);
    for (const [kind, variable, fallback] of [
      ['vanillajs', 'VANILLA_PORT', 3105],
      ['react', 'REACT_PORT', 3106],
    ] as const) {
      const app = await startExampleAppServer(kind, port(variable, fallback));
      stops.push(() => app.kill());
      process.stdout.write(`MCP App server ${kind} listening on ${app.url}\n`);
    }
    return stops;
  } catch (error) {
    await Promise.all(stops.map(stop => stop()));
    throw error;
  }
}

main().then(
  stops => {
    const stop = () =>
      Promise.all(stops.map(each => each())).then(
        () => process.exit(0),
        () => process.exit(1),
      );
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  },
  error => {
    process.stderr.write(`development MCP servers failed to start: ${error}\n`);
    process.exit(1);
  },
);
