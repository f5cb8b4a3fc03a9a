/*
 * The official conformance suite's task scenarios through the broker (docs/contracts/
 * tasks-and-apps.md §7, configuration 2): the whole plugin (startTestBackend) in front of the
 * tasks fixture's 2025-11-25 half with its conformance tools (legacyConformanceTools.ts), one
 * backend with `toolPrefix: ""`, so the suite — a 2026-07-28 client — sees the fixture's tools
 * under their own names and every task under a broker id, translated from the 2025-11-25 tasks
 * capability (§2.12.4). Every check must pass, as through the 2026-07-28 half
 * (plugin.modernTasks.conformance.test.ts); the suite itself skips the notifications scenario.
 */
import type { AddressInfo } from 'node:net';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  runTaskScenario,
  startTasksServer,
  TASK_NOTIFICATIONS_SCENARIO,
  TASK_SCENARIOS,
  type LegacyTasksServer,
} from '@internal/test-mcp-backends';
import { mcpBrokerPlugin } from './plugin';
import { waitFor } from './testing/waitFor';

describe('the conformance task scenarios through the broker (2025-11-25 fixture behind it)', () => {
  let fixture: LegacyTasksServer;
  let backend: Awaited<ReturnType<typeof startTestBackend>>;
  let url: string;

  beforeAll(async () => {
    fixture = await startTasksServer({ conformanceTools: true });
    backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [{ name: 'jobs', url: fixture.url, toolPrefix: '' }],
              reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
            },
          },
        }),
      ],
    });
    url = `http://127.0.0.1:${(backend.server.address() as AddressInfo).port}/api/mcp-broker/mcp`;
    // The suite's first request must find the fixture's tools listed.
    await waitFor(async () => {
      const response = await fetch(`${url.replace(/\/mcp$/, '')}/status`);
      const status = await response.json();
      return status.backends?.[0]?.state === 'connected';
    }, 'the fixture to be connected');
  }, 60_000);

  afterAll(async () => {
    await backend?.server.stop?.();
    await fixture?.close();
  }, 30_000);

  it.each(TASK_SCENARIOS.filter(scenario => scenario !== TASK_NOTIFICATIONS_SCENARIO))(
    '%s: every check passes',
    async scenario => {
      const checks = await runTaskScenario(url, scenario);
      expect(checks.filter(check => check.status !== 'SUCCESS')).toEqual([]);
      expect(checks.length).toBeGreaterThan(1);
    },
    120_000,
  );

  it(`${TASK_NOTIFICATIONS_SCENARIO}: skipped by the suite itself, nothing failed`, async () => {
    const checks = await runTaskScenario(url, TASK_NOTIFICATIONS_SCENARIO);
    expect(checks.map(check => check.status)).toEqual(['SKIPPED']);
  }, 120_000);
});
