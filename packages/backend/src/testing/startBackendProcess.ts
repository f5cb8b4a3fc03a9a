/*
 * Starts the real development backend (packages/backend) as a child process for
 * end-to-end tests: real auth (oauth2-proxy sign-in), catalog, RBAC and both plugins.
 * Each call gets its own port (bound here and handed over to the process, so no other process
 * can take it in between) and an in-memory SQLite database unless the given config says
 * otherwise.
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import { reservePortForChild, superviseChildProcess } from '@internal/test-mcp-backends';

/** Options of {@link startBackendProcess}. */
export interface BackendProcessOptions {
  /**
   * Config merged over app-config.yaml (objects merge, arrays replace); a function receives the
   * backend's base URL first (for config that points at the backend itself).
   */
  config?: Record<string, unknown> | ((baseUrl: string) => Record<string, unknown>);
  /** Extra environment variables for the process. */
  env?: Record<string, string>;
  /** Extra Node flags before the script (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
  /**
   * How long to wait for the backend to answer and sign users in; default 100 s (a start takes
   * 10–20 s on an idle machine and over a minute on a loaded one, and most suites allow 120 s).
   */
  startTimeoutMs?: number;
  /**
   * Lets the test move the process's wall clock forward (`advanceClock`, through the preload
   * `advancingClock.cjs`): a stand-in for waiting, e.g. until tokens expire. Default false.
   */
  advancingClock?: boolean;
  /**
   * Load src/instrumentation.ts first, as `yarn start` does (the OpenTelemetry SDK and the
   * telemetry page, on a free port here: {@link BackendProcess.telemetryUrl}).
   */
  instrumentation?: boolean;
  /**
   * Load the backend's config schema saved by an earlier start of the same sources instead of
   * compiling the plugins' `config.d.ts` again (the preload `configSchemaCache.cjs`: about 3 s of
   * CPU a start). Default true; false for a start exactly as `yarn start` makes it.
   */
  cachedConfigSchema?: boolean;
}

/** A running backend process. */
export interface BackendProcess {
  baseUrl: string;
  port: number;
  /** The backend's process id (benchmarks read its CPU time and RSS from /proc). */
  pid: number;
  /** Signs a fixture user in through the oauth2-proxy provider and returns its Backstage token. */
  signIn(userName: string): Promise<string>;
  /** Everything the process printed so far (for diagnosing a failed test). */
  output(): string;
  /**
   * The telemetry page (`/metrics`, `/traces`) of a backend started with `instrumentation`, as
   * it printed it; undefined before it did, or without instrumentation.
   */
  telemetryUrl(): string | undefined;
  stop(): Promise<void>;
  /** Kills the process at once (SIGKILL: no shutdown hooks), as a crashed replica would die. */
  kill(): Promise<void>;
  /**
   * Moves the process's wall clock `ms` forward; resolves once it reads the new time. Only with
   * the `advancingClock` option.
   */
  advanceClock(ms: number): Promise<void>;
}

const backendRoot = resolvePackagePath('backend');
const repoRoot = path.resolve(backendRoot, '..', '..');

interface SignInAnswer {
  backstageIdentity?: { token?: string; identity?: { ownershipEntityRefs?: string[] } };
}

async function signInOnce(baseUrl: string, userName: string): Promise<SignInAnswer | undefined> {
  const response = await fetch(`${baseUrl}/api/auth/oauth2Proxy/refresh`, {
    headers: { 'X-Forwarded-User': userName },
  });
  if (!response.ok) return undefined;
  return (await response.json()) as SignInAnswer;
}

/** The fixture's team: bob and dave are its members (examples/org.yaml). */
const FIXTURE_TEAM = 'group:default/payments-team';

/**
 * Whether the catalog has the fixture organisation with its memberships, not just the users:
 * bob's sign-in carries his team (his memberOf relation, which goes into the token), and the
 * team lists bob and dave (its hasMember relations, which RBAC reads for the group's roles).
 * The catalog stitches each entity on its own, so a user can sign in before either is there; a
 * test that starts then gets 403 for what bob may do through his team. (scripts/lib/devBackend.mjs
 * waits for the same before `yarn start` prints `Ready:`.)
 */
async function fixtureOrganisationReady(baseUrl: string): Promise<boolean> {
  const bob = await signInOnce(baseUrl, 'bob');
  const token = bob?.backstageIdentity?.token;
  if (!token || !bob.backstageIdentity?.identity?.ownershipEntityRefs?.includes(FIXTURE_TEAM)) {
    return false;
  }
  const team = await fetch(`${baseUrl}/api/catalog/entities/by-name/group/default/payments-team`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!team.ok) return false;
  const { relations = [] } = (await team.json()) as {
    relations?: Array<{ type: string; targetRef: string }>;
  };
  const members = relations.filter(r => r.type === 'hasMember').map(r => r.targetRef);
  return ['user:default/bob', 'user:default/dave'].every(member => members.includes(member));
}

/**
 * Starts the development backend on a free port and waits until the fixture users can sign in
 * with their team memberships in place.
 */
export async function startBackendProcess(
  options: BackendProcessOptions = {},
): Promise<BackendProcess> {
  // app-config.yaml's interface (loopback).
  const reserved = await reservePortForChild('127.0.0.1');
  const port = reserved.port;
  const baseUrl = `http://localhost:${port}`;
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'backend-e2e-'));
  const overridePath = path.join(configDir, 'app-config.test.json');
  const config = typeof options.config === 'function' ? options.config(baseUrl) : options.config;
  const override = {
    ...config,
    backend: {
      ...(config?.backend as object | undefined),
      baseUrl,
      // Only the port: the interface is app-config.yaml's (loopback), as under `yarn start`.
      listen: { port },
    },
  };
  fs.writeFileSync(overridePath, JSON.stringify(override));

  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...reserved.nodeArgs,
      ...(options.advancingClock
        ? ['--require', path.join(backendRoot, 'src', 'testing', 'advancingClock.cjs')]
        : []),
      ...(options.nodeArgs ?? []),
      ...(options.cachedConfigSchema === false
        ? []
        : ['--require', path.join(backendRoot, 'src', 'testing', 'configSchemaCache.cjs')]),
      '--require',
      require.resolve('@backstage/cli/config/nodeTransform.cjs'),
      // After the TypeScript transform, which it needs (as under `backstage-cli package start`).
      ...(options.instrumentation ? ['--require', './src/instrumentation.ts'] : []),
      'src/index.ts',
      '--config',
      path.join(repoRoot, 'app-config.yaml'),
      '--config',
      overridePath,
    ],
    {
      cwd: backendRoot,
      env: {
        ...process.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        // A free port for the telemetry page (printed): several backends may run at once.
        ...(options.instrumentation ? { OTEL_EXPORTER_PROMETHEUS_PORT: '0' } : {}),
        ...options.env,
        ...reserved.env,
      },
      stdio: reserved.stdio(['ignore', 'pipe', 'pipe']),
    },
  );
  await reserved.handOver(child);
  const { output, stop, kill } = superviseChildProcess(child, {
    afterExit: () => fs.rmSync(configDir, { recursive: true, force: true }),
  });

  // Once the catalog answered bob (it asked the permission plugin, which answers only after RBAC
  // started), these lines show whether RBAC skipped a plugin's conditional policies (RBAC logs
  // them when a plugin's metadata read got 404 or an error; the development backend starts RBAC
  // once those plugins are up): waiting longer cannot bring the policies back, and a
  // test would get 403s it cannot explain.
  const policiesSkipped = () =>
    /No permission metadata found for \S+|Failed to retrieve permission metadata for \S+/.exec(
      output(),
    );
  const deadline = Date.now() + (options.startTimeoutMs ?? 100_000);
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`backend exited with code ${child.exitCode} during start:\n${output()}`);
    }
    let ready = false;
    try {
      ready = await fixtureOrganisationReady(baseUrl);
    } catch {
      // not listening yet
    }
    if (ready) {
      const skipped = policiesSkipped();
      if (!skipped) break;
      await stop();
      throw new Error(
        `RBAC skipped conditional policies at start ("${skipped[0]}"; docs/deployment.md, "Starting"):\n${output()}`,
      );
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`backend did not start within the time limit:\n${output()}`);
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }

  return {
    baseUrl,
    port,
    pid: child.pid!,
    output,
    telemetryUrl: () => /Telemetry: metrics at (http:\/\/[^\s]+)\/metrics/.exec(output())?.[1],
    stop,
    kill,
    advanceClock(ms: number) {
      if (!options.advancingClock) {
        return Promise.reject(new Error('started without the advancingClock option'));
      }
      return new Promise<void>((resolve, reject) => {
        const onMessage = (message: unknown) => {
          if ((message as { type?: unknown } | null)?.type !== 'clock-advanced') return;
          child.off('message', onMessage);
          resolve();
        };
        child.on('message', onMessage);
        child.send({ type: 'advance-clock', ms }, error => {
          if (!error) return;
          child.off('message', onMessage);
          reject(error);
        });
      });
    },
    async signIn(userName: string) {
      const token = (await signInOnce(baseUrl, userName))?.backstageIdentity?.token;
      if (!token) throw new Error(`could not sign in as ${userName}`);
      return token;
    },
  };
}
