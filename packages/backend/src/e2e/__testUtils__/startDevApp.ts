/*
 * Starts the development app (packages/app) as `yarn start` serves it — `backstage-cli package
 * start`, a development build, so its development sign-in page is there — on a free port, for
 * browser tests. The backend's URL may be given later: the dev server watches its config files
 * and re-injects the frontend config, so the app can compile while the backend starts.
 *
 * Why the dev server and not a production bundle: a production build never contains the
 * development sign-in (packages/app/src/modules/signIn), and that is what a person uses here.
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import { superviseChildProcess } from '@internal/test-mcp-backends';

/** A running development app. */
export interface DevApp {
  /** `http://localhost:<port>` (the app's `app.baseUrl`). */
  baseUrl: string;
  /** Resolves once the dev server serves the compiled app; rejects when it cannot. */
  ready: Promise<true>;
  /** Points the app at a backend and waits until the page it serves says so. */
  useBackend(backendBaseUrl: string): Promise<void>;
  /** Everything the dev server printed (for diagnosing a failed test). */
  output(): string;
  stop(): Promise<void>;
}

const appRoot = resolvePackagePath('app');
const repoRoot = path.resolve(appRoot, '..', '..');
const cliBin = require.resolve('@backstage/cli/bin/backstage-cli');

/**
 * A port nobody listens on right now. The dev server binds it a moment later: another process
 * taking it in between makes `ready` reject with the dev server's EADDRINUSE.
 */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function until<T>(
  what: string,
  deadline: number,
  attempt: () => Promise<T | undefined>,
  failed: () => string | undefined,
): Promise<T> {
  for (;;) {
    const failure = failed();
    if (failure !== undefined) throw new Error(`${what}: ${failure}`);
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new Error(`${what}: not done in time`);
    await new Promise(resolve => setTimeout(resolve, 250));
  }
}

/**
 * Starts the app's dev server on a free port. Resolves at once with its URL (so a backend can be
 * configured with it while the app compiles); `ready` resolves once it serves the compiled app.
 */
export async function startDevApp(options: { startTimeoutMs?: number } = {}): Promise<DevApp> {
  const port = await freePort();
  const startTimeoutMs = options.startTimeoutMs ?? 300_000;
  const baseUrl = `http://localhost:${port}`;
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dev-app-'));
  const overridePath = path.join(configDir, 'app-config.browser-test.json');
  const writeConfig = (backendBaseUrl: string) =>
    fs.writeFileSync(
      overridePath,
      JSON.stringify({ app: { baseUrl }, backend: { baseUrl: backendBaseUrl } }),
    );
  // Until the backend is known: a URL nobody serves.
  writeConfig('http://127.0.0.1:9');

  const child: ChildProcess = spawn(
    process.execPath,
    [
      cliBin,
      'package',
      'start',
      '--config',
      path.join(repoRoot, 'app-config.yaml'),
      '--config',
      overridePath,
    ],
    {
      cwd: appRoot,
      // CI: no hot reload and no browser window; its own process group, so stop() ends the
      // bundler's workers too.
      env: { ...process.env, CI: 'true', BROWSER: 'none', NODE_ENV: 'development' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  const { output, stop } = superviseChildProcess(child, {
    processGroup: true,
    afterExit: () => fs.rmSync(configDir, { recursive: true, force: true }),
  });
  const failed = () =>
    child.exitCode !== null ? `the dev server exited (${child.exitCode}):\n${output()}` : undefined;

  // The dev server answers once the first compilation is done.
  const ready = until(
    'the development app compiling',
    Date.now() + startTimeoutMs,
    async () => ((await fetch(baseUrl)).ok ? true : undefined),
    failed,
  );
  // A failed start is reported by whoever awaits `ready`, not as an unhandled rejection.
  ready.catch(() => undefined);
  return {
    baseUrl,
    ready,
    output,
    stop,
    async useBackend(backendBaseUrl: string) {
      writeConfig(backendBaseUrl);
      await until(
        'the development app serving the new backend URL',
        Date.now() + 120_000,
        async () =>
          (await (await fetch(baseUrl)).text()).includes(backendBaseUrl) ? true : undefined,
        failed,
      );
    },
  };
}
