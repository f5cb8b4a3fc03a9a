/*
 * MCP access in a real browser (contract mcp-access §10.3; headless Chromium through
 * playwright-core) against the real development backend — RBAC with the development policies,
 * the catalog with the broker's catalog module, the portal, the broker with the portal's grant
 * module — and the development app's dev server, with the example MCP server behind the broker
 * as server `example`, owned by payments-team (bob's and dave's team).
 *
 * bob makes the MCP product `mcp/example-tools` on the create page's MCP source, with plans
 * bronze (5 calls a day) and gold, and publishes it; alice, who may use only the example
 * server's read-only tools, opens its page (the badge naming the server, the tools on offer,
 * the plans as quota tables) and requests bronze in a dialog that says no key is issued; bob
 * approves it on Approvals, where its kind is "MCP access"; alice then has access on the
 * product page, an "MCP access" row without a reveal button on My keys, and the server's other
 * tools on MCP tools. alice calls one of them through the official SDK client: My MCP usage lists
 * the call and her bronze quota as "1 of 5 per day (UTC)", and bob's usage page of the example
 * server lists her. carol, an admin, revokes it under the product's People with access with a
 * reason: the tools leave alice's open MCP tools page without a reload (the portal's
 * notification is signalled to it), the request leaves My keys, and a notification
 * tells her why. Every page gets a screenshot (test-results/browser-screenshots) and an axe
 * check: no serious or critical violation.
 *
 * The steps share one backend and build on each other, in order. Waits are for what the page
 * shows (role locators; a locator's waitFor fails the step when it never appears, so it asserts).
 */
/* eslint jest/expect-expect: ["warn", { "assertFunctionNames": ["expect", "check", "**.waitFor"] }] */
import { startExampleMcpServer, type ExampleMcpServer } from '@internal/example-mcp-server';
import type { Locator, Page } from 'playwright-core';
import { apiEntityOfMcpServer } from '../../testing/catalogEntities';
import { STATIC_SERVICE_TOKEN } from '../../testing/portalHttp';
import { screenshot, seriousA11yViolations } from '../__testUtils__/browser';
import {
  BROWSER_STACK_START_TIMEOUT_MS,
  BrowserStack,
  sidebarLink,
  startBrowserStack,
  STEP_TIMEOUT_MS,
} from '../__testUtils__/browserStack';
import { recordFailedSteps } from '../__testUtils__/recordFailedSteps';
import { connectBrokerClient, waitFor } from '../brokerTestKit';

/** The product of the fixture's walkthrough (contract mcp-access §9). */
const PRODUCT = { namespace: 'mcp', name: 'example-tools', displayName: 'Example tools' };
/** alice's use case: finds her request in bob's queue. */
const USE_CASE = 'Agent experiments with the example tools';
/** A tool of the example server the development policy gives MCP users only through a grant. */
const GRANTED_TOOL = 'example_add_tool';

jest.setTimeout(STEP_TIMEOUT_MS);

describe('MCP access in a real browser (Chromium, development backend and app)', () => {
  let example: ExampleMcpServer;
  let stack: BrowserStack;
  const pages: Record<string, Page> = {};

  beforeAll(async () => {
    example = await startExampleMcpServer({ port: 0 });
    stack = await startBrowserStack({
      config: {
        mcpBroker: {
          servers: [{ name: 'example', url: example.url, owner: 'group:default/payments-team' }],
          // Usage pages show what was flushed: flush soon after alice's call (1 s is the least).
          usage: { flushInterval: '1s' },
        },
      },
    });
    // The create page offers the servers the catalog lists: wait for the broker's module.
    await waitFor(
      () => apiEntityOfMcpServer(stack.backend, STATIC_SERVICE_TOKEN, 'example'),
      60_000,
      'the example server in the catalog',
    );
  }, BROWSER_STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all([stack?.stop(), example?.close()]);
  }, 60_000);

  /** Keeps a screenshot of the page and checks it with axe: no serious or critical violation. */
  async function check(page: Page, name: string) {
    await screenshot(page, name);
    expect({ page: name, violations: await seriousA11yViolations(page) }).toEqual({
      page: name,
      violations: [],
    });
  }

  /** The portal page's tab (a link in its content navigation). */
  const tab = (page: Page, name: string) =>
    page.getByRole('navigation', { name: 'Content navigation' }).getByRole('link', { name });

  const row = (scope: Page | Locator, text: string | RegExp) =>
    scope.getByRole('row').filter({ hasText: text });

  /** The example server's tools a person may use, as the MCP tools page lists them. */
  const toolsOfExample = (page: Page) => page.getByRole('list', { name: 'Tools of example' });

  /**
   * A step that, when it fails, keeps a screenshot and the address of every window
   * (test-results/browser-failures/mcp-access-<step>-*), so a failure in CI can be seen.
   */
  const step = recordFailedSteps('mcp-access', () => pages);

  it(
    'bob creates an MCP product from the create page’s MCP source, with two plans, and publishes it',
    step('create', async () => {
      const page = await stack.signIn('bob');
      pages.bob = page;
      await sidebarLink(page, 'API portal').click();
      await page.getByRole('link', { name: 'Create API product' }).click();
      await page.getByRole('heading', { name: 'Create an API product' }).waitFor();
      await page.getByRole('radio', { name: /An MCP server or endpoint/ }).check({ force: true });
      await page.getByRole('button', { name: /MCP server/ }).click();
      await page.getByRole('option', { name: /MCP server example/ }).click();
      await page.getByText('Owner: group:default/payments-team').waitFor();
      await page.getByRole('textbox', { name: /^Namespace/ }).fill(PRODUCT.namespace);
      await page.getByRole('textbox', { name: /^Name\b/ }).fill(PRODUCT.name);
      await page.getByRole('textbox', { name: /^Display name/ }).fill(PRODUCT.displayName);

      // Plan 1 starts as bronze with one quota (100 a day): 5 a day instead.
      expect(await page.getByRole('textbox', { name: /^Tier of plan 1/ }).inputValue()).toBe(
        'bronze',
      );
      await page.getByRole('textbox', { name: /^Calls of plan 1, quota 1/ }).fill('5');
      await page.getByRole('button', { name: 'Add a plan' }).click();
      await page.getByRole('textbox', { name: /^Tier of plan 2/ }).fill('gold');
      await page.getByRole('button', { name: 'Add a quota to plan 2' }).click();
      await page.getByRole('textbox', { name: /^Calls of plan 2, quota 2/ }).fill('10');
      await page.getByRole('button', { name: /Window of plan 2, quota 2/ }).click();
      await page.getByRole('option', { name: 'per minute' }).click();
      await page.getByRole('textbox', { name: /^Tools of plan 2, quota 2/ }).fill('add_tool');
      await check(page, 'mcp-01-create-product');
      await page.getByRole('button', { name: 'Create product' }).click();

      await page.getByRole('heading', { name: PRODUCT.displayName, level: 2 }).waitFor();
      await page.getByText('Only its owners see this product').waitFor();
      await page.getByRole('button', { name: 'Publish' }).click();
      await page.getByRole('button', { name: 'Unpublish' }).waitFor();
      // The owner is the server's, whatever bob chose: his team.
      await page.getByText('owned by group:default/payments-team', { exact: false }).waitFor();
      await check(page, 'mcp-02-product-owner');
    }),
  );

  it(
    'alice sees the server, its tools and the plans as quotas, and requests bronze without a key',
    step('request', async () => {
      const page = await stack.signIn('alice');
      pages.alice = page;
      // Before: the development policy lets her use the example server's read-only tools only.
      await sidebarLink(page, 'MCP tools').click();
      await toolsOfExample(page).getByText('example_echo').waitFor();
      expect(await toolsOfExample(page).getByText(GRANTED_TOOL).count()).toBe(0);

      await sidebarLink(page, 'API portal').click();
      await page
        .getByRole('region', { name: 'API products' })
        .getByRole('link', { name: new RegExp(PRODUCT.displayName) })
        .click();
      await page.getByRole('heading', { name: PRODUCT.displayName, level: 2 }).waitFor();
      await page.getByRole('link', { name: 'MCP server example' }).waitFor();
      // The offer is the server's, from its catalog entity: every tool, also those she lacks.
      const offer = page.getByRole('list', { name: 'Tools of MCP server example' });
      await offer.getByText(GRANTED_TOOL, { exact: true }).waitFor();
      await offer.getByText('example_echo', { exact: true }).waitFor();
      const plans = page.getByRole('region', { name: 'Plans' });
      await row(plans, 'bronze').getByText('5 tool calls per day (UTC)').waitFor();
      await row(plans, 'gold').getByText('100 tool calls per day (UTC)').waitFor();
      await row(plans, 'gold').getByText('10 calls of add_tool per minute').waitFor();
      await page.getByText('You have not requested access to this product yet').waitFor();
      await check(page, 'mcp-03-product');

      await page.getByRole('button', { name: 'Request access' }).click();
      const dialog = page.getByRole('dialog', {
        name: `Request access to ${PRODUCT.displayName}`,
      });
      await dialog
        .getByText(
          'No key is issued: you use the MCP broker with your own sign-in. Your tools appear in your IDE as soon as the request is approved.',
        )
        .waitFor();
      // bronze is the first plan, chosen already; its quota shows beside it.
      await dialog
        .getByRole('button', { name: /Plan/ })
        .getByText(/bronze/)
        .waitFor();
      await dialog.getByRole('textbox', { name: 'Use case' }).fill(USE_CASE);
      await check(page, 'mcp-04-request-access');
      await dialog.getByRole('button', { name: 'Send request' }).click();
      await dialog.getByText('Request sent').waitFor();
      await dialog.getByRole('button', { name: 'Done' }).click();
      await dialog.waitFor({ state: 'detached' });
      await page.getByText('Pending', { exact: true }).first().waitFor();
    }),
  );

  it(
    'bob approves it on Approvals, where its kind is MCP access',
    step('approve', async () => {
      const page = pages.bob;
      await tab(page, 'Approvals').click();
      const queue = page.getByRole('region', { name: 'Pending requests' });
      const request = row(queue, USE_CASE);
      await request.getByText('MCP access', { exact: true }).waitFor();
      await request.getByText('MCP server "example"', { exact: false }).waitFor();
      await request.getByText('5 tool calls per day (UTC)').waitFor();
      await check(page, 'mcp-05-approvals');
      // The checkbox's drawn indicator lies over the input (as in portalBrowser.test.ts).
      await request.getByRole('checkbox').check({ force: true });
      await page.getByRole('textbox', { name: 'Reason (optional)' }).fill('Welcome');
      await page.getByRole('button', { name: 'Approve selected (1)' }).click();
      await page.getByText('1 of 1 approved').waitFor();
      await queue.getByText('No pending requests to decide').waitFor();
    }),
  );

  it(
    'alice has access: on the product page, on My keys without a reveal, and her new tools on MCP tools',
    step('access', async () => {
      const page = pages.alice;
      await page.reload();
      await page.getByText('You have access (bronze)').waitFor();
      await page.getByRole('link', { name: 'Your tools on MCP tools' }).waitFor();
      await check(page, 'mcp-06-product-access');

      await tab(page, 'My keys').click();
      const mine = row(page.getByRole('region', { name: 'My API keys' }), PRODUCT.name);
      await mine.getByText('MCP access', { exact: true }).waitFor();
      await mine.getByText('Approved', { exact: true }).waitFor();
      await mine.getByRole('link', { name: 'MCP tools' }).waitFor();
      expect(await mine.getByRole('button', { name: /^Reveal secret/ }).count()).toBe(0);
      await check(page, 'mcp-07-my-keys');

      await sidebarLink(page, 'MCP tools').click();
      await toolsOfExample(page).getByText(GRANTED_TOOL, { exact: true }).waitFor();
      await toolsOfExample(page).getByText('example_remove_tool', { exact: true }).waitFor();
      await check(page, 'mcp-08-mcp-tools');
    }),
  );

  it(
    'alice calls the granted tool through the SDK client; My MCP usage counts it against bronze, and bob sees her among his server’s users',
    step('usage', async () => {
      const token = await stack.backend.signIn('alice');
      const client = await connectBrokerClient(stack.backend.baseUrl, token);
      try {
        const result = await client.client.callTool({
          name: GRANTED_TOOL,
          arguments: { name: 'from_the_browser_test' },
        });
        expect(result.isError).toBeFalsy();
      } finally {
        await client.close();
      }

      const page = pages.alice;
      await sidebarLink(page, 'MCP tools').click();
      await page.getByRole('link', { name: 'My MCP usage' }).click();
      const table = page.getByRole('region', { name: 'Calls per server and tool' });
      // The broker flushes its counts every second here: wait for the row, reloading until then.
      await waitFor(
        async () => {
          await page.reload();
          await page.getByRole('region', { name: 'Your plans' }).waitFor();
          return (await row(table, 'add_tool').count()) > 0 || undefined;
        },
        60_000,
        'alice’s call on My MCP usage',
      );
      await row(table, 'add_tool').getByText('example', { exact: true }).waitFor();
      await page
        .getByRole('region', { name: 'Your plans' })
        .getByRole('meter', { name: /^1 of 5 per day/ })
        .waitFor();
      await check(page, 'mcp-09-my-usage');

      const bob = pages.bob;
      await sidebarLink(bob, 'MCP tools').click();
      await bob.getByRole('link', { name: "My servers' usage" }).click();
      await bob.getByRole('link', { name: 'example' }).click();
      const people = bob.getByRole('region', { name: 'People' });
      await row(people, 'alice').waitFor();
      await check(bob, 'mcp-10-server-usage');
    }),
  );

  it(
    'carol revokes it under People with access with a reason; alice loses the tools and is told why',
    step('revoke', async () => {
      // alice watches her MCP tools page while carol revokes: it follows without a reload.
      const alice = pages.alice;
      await sidebarLink(alice, 'MCP tools').click();
      await toolsOfExample(alice).getByText(GRANTED_TOOL, { exact: true }).waitFor();

      const page = await stack.signIn('carol');
      pages.carol = page;
      await sidebarLink(page, 'API portal').click();
      await page
        .getByRole('region', { name: 'API products' })
        .getByRole('link', { name: new RegExp(PRODUCT.displayName) })
        .click();
      const people = page.getByRole('region', { name: 'People with access' });
      const alices = row(people, 'alice');
      await alices.getByText('bronze', { exact: true }).waitFor();
      await check(page, 'mcp-11-people-with-access');
      await alices.getByRole('button', { name: 'Revoke access of alice' }).click();
      const dialog = page.getByRole('dialog', { name: /^Revoke access example-tools-/ });
      await dialog
        .getByText(`Requested by alice for ${PRODUCT.namespace}/${PRODUCT.name}`)
        .waitFor();
      await dialog.getByRole('textbox', { name: /^Reason/ }).fill('The audit is over');
      await dialog.getByRole('button', { name: 'Revoke access' }).click();
      await people.getByText('Nobody has access yet').waitFor();

      // The portal's notification is signalled to alice's page, which reads the catalog again.
      await toolsOfExample(alice)
        .getByText(GRANTED_TOOL, { exact: true })
        .waitFor({ state: 'detached' });
      await toolsOfExample(alice).getByText('example_echo', { exact: true }).waitFor();
      await sidebarLink(alice, 'API portal').click();
      await tab(alice, 'My keys').click();
      await alice.getByText('You have no API keys yet').waitFor();
      await sidebarLink(alice, 'Notifications').click();
      await alice
        .getByText(/Your access to .+ was revoked by .+: The audit is over/)
        .first()
        .waitFor();
      // Backstage's own notifications page: a screenshot only (see portalBrowser.test.ts).
      await screenshot(alice, 'mcp-12-notification');
    }),
  );
});
