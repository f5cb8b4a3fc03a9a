/*
 * Where the README walkthroughs run (e2e/readmeWalkthroughs.test.ts): what a reader has after
 * `yarn start` printed its "Ready:" line — the real development backend process with the
 * development config and a fresh in-memory database, the two example MCP servers, the `jobs`
 * server of long-running tasks, the two MCP Apps example servers and Backstage's own (mcp-actions)
 * behind the broker, all connected — and one bash with nothing but HOME and PATH in its
 * environment. The README's addresses (localhost:7007, the example servers' 3101 and 3103, jobs'
 * 3104, the app servers' 3105 and 3106, and the telemetry page's 9464) are replaced by the ports
 * this run got, in the code and in the promised output alike.
 */
import path from 'node:path';
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import { startExampleMcpServer, startModernExampleMcpServer } from '@internal/example-mcp-server';
import {
  DEVELOPMENT_DEPLOY_DURATION_MS,
  startExampleAppServer,
  startTasksServer,
} from '@internal/test-mcp-backends';
import { brokerStatus, waitFor } from '../brokerTestKit';
import { BashSession } from '../../testing/BashSession';
import { matchesExpectation, WalkthroughStep } from '../../testing/readmeWalkthrough';
import { BackendProcess, startBackendProcess } from '../../testing/startBackendProcess';

const repoRoot = path.resolve(resolvePackagePath('backend'), '..', '..');

/** How long one step may run (the first `npx` of the MCP Inspector downloads it). */
export const STEP_TIMEOUT_MS = 180_000;

/** A development backend and a reader's shell, for one README. */
export class WalkthroughEnvironment {
  readonly #backend: BackendProcess;
  readonly #servers: Array<{ close(): Promise<void> }>;
  readonly #shell: BashSession;
  readonly #ports: Array<[string, number]>;

  /** Starts the example servers and the backend, and waits until the broker connected both. */
  static async start(): Promise<WalkthroughEnvironment> {
    const servers: Array<{ close(): Promise<void> }> = [];
    try {
      const example = await startExampleMcpServer({ port: 0 });
      servers.push(example);
      const modern = await startModernExampleMcpServer({ port: 0 });
      servers.push(modern);
      const jobs = await startTasksServer({ deployDurationMs: DEVELOPMENT_DEPLOY_DURATION_MS });
      servers.push(jobs);
      const [vanilla, react] = await Promise.all(
        (['vanillajs', 'react'] as const).map(async kind => {
          const app = await startExampleAppServer(kind);
          servers.push({ close: () => app.kill() });
          return app;
        }),
      );
      // app-config.yaml's servers at this run's addresses (Backstage's own MCP server included).
      const backend = await startBackendProcess({
        // As `yarn start`: the OpenTelemetry SDK and its page (README: "Telemetry").
        instrumentation: true,
        config: baseUrl => ({
          mcpBroker: {
            servers: [
              { name: 'example', url: example.url },
              { name: 'example-modern', url: modern.url },
              {
                name: 'backstage',
                url: `${baseUrl}/api/mcp-actions/v1`,
                headers: { Authorization: 'Bearer dev-only-static-token-0123456789' },
                auth: { mode: 'backstage', targetPluginId: 'mcp-actions' },
              },
              { name: 'jobs', url: jobs.url },
              { name: 'vanilla', url: vanilla.url },
              { name: 'react', url: react.url },
            ],
          },
        }),
      });
      const carol = await backend.signIn('carol');
      await waitFor(
        async () =>
          (await brokerStatus(backend.baseUrl, carol)).backends.every(b => b.state === 'connected'),
        60_000,
        'the broker to connect every server',
      );
      const telemetry = await waitFor(
        () => backend.telemetryUrl(),
        10_000,
        'the telemetry page of the backend',
      );
      return new WalkthroughEnvironment(backend, servers, [
        ['7007', backend.port],
        ['3101', example.port],
        ['3103', modern.port],
        ['3104', Number(new URL(jobs.url).port)],
        ['3105', vanilla.port],
        ['3106', react.port],
        ['9464', Number(new URL(telemetry).port)],
      ]);
    } catch (error) {
      await Promise.all(servers.map(server => server.close()));
      throw error;
    }
  }

  private constructor(
    backend: BackendProcess,
    servers: Array<{ close(): Promise<void> }>,
    ports: Array<[string, number]>,
  ) {
    this.#backend = backend;
    this.#servers = servers;
    this.#ports = ports;
    this.#shell = new BashSession(repoRoot, {
      HOME: process.env.HOME ?? '/tmp',
      PATH: process.env.PATH ?? '/usr/bin:/bin',
    });
  }

  /**
   * Runs one step in the shell. Returns why it failed (a message showing the code, what the
   * README promises, what it printed and the backend's last lines), or undefined when it did
   * what the README says.
   */
  async run(readme: string, step: WalkthroughStep): Promise<string | undefined> {
    const result = await this.#shell.run(this.#substitute(step.code), STEP_TIMEOUT_MS);
    const expected = step.expected?.map(text => this.#substitute(text));
    let failed: string | undefined;
    if (expected === undefined) {
      if (result.status !== 0) failed = `exited with status ${result.status}`;
    } else if (!matchesExpectation(expected, result.stdout)) {
      failed = 'printed something else than the README promises';
    }
    if (failed === undefined) return undefined;
    const backendTail = this.#backend.output().split('\n').slice(-40).join('\n');
    return [
      `${readme}:${step.line}: the step ${failed}`,
      `--- code\n${step.code}`,
      ...(expected ? [`--- promised\n${expected.join('\n')}`] : []),
      `--- printed\n${result.stdout}`,
      `--- standard error\n${result.stderr}`,
      `--- backend output (last 40 lines)\n${backendTail}`,
    ].join('\n');
  }

  async stop(): Promise<void> {
    await this.#shell.close();
    await this.#backend.stop();
    await Promise.all(this.#servers.map(server => server.close()));
  }

  #substitute(text: string): string {
    return this.#ports.reduce(
      (result, [documented, actual]) =>
        result.replace(
          new RegExp(`(localhost|127\\.0\\.0\\.1):${documented}\\b`, 'g'),
          `$1:${actual}`,
        ),
      text,
    );
  }
}
