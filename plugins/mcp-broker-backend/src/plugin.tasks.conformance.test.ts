/*
 * The official conformance suite's task scenarios through the broker (docs/contracts/
 * tasks-and-apps.md §7): the whole plugin (startTestBackend) in front of one tasks fixture with
 * `toolPrefix: ""`, so the suite — a 2026-07-28 client — sees the fixture's tools under their own
 * names and every task under a broker id. Configuration 1: the fixture's 2026-07-28 half
 * (§2.12.2 pass-through; every check passes against it directly too,
 * modernTasksServer.conformance.test.ts). Configuration 2: its 2025-11-25 half with its
 * conformance tools (legacyConformanceTools.ts), translated from the 2025-11-25 tasks capability
 * (§2.12.4). Every check must pass in both; the suite itself skips the notifications scenario.
 */
import type { AddressInfo } from 'node:net';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  runTaskScenario,
  startModernTasksServer,
  startTasksServer,
  TASK_NOTIFICATIONS_SCENARIO,
  TASK_SCENARIOS,
} from '@internal/test-mcp-backends';
import { mcpBrokerPlugin } from './plugin';
import { waitFor } from './testing/waitFor';

const CONFIGURATIONS = [
  {
    label: 'configuration 1, the 2026-07-28 fixture',
    start: () => startModernTasksServer(),
  },
  {
    label: 'configuration 2, the 2025-11-25 fixture',
    start: () => startTasksServer({ conformanceTools: true }),
  },
];

describe.each(CONFIGURATIONS)(
  'the conformance task scenarios through the broker ($label behind it)',
  ({ start }) => {
    let fixture: { url: string; close(): Promise<void> };
    let backend: Awaited<ReturnType<typeof startTestBackend>>;
    let url: string;

    beforeAll(async () => {
      fixture = await start();
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
  },
);
