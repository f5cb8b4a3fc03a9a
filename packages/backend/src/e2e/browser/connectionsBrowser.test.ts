/*
 * My connections in a real browser (headless Chromium through playwright-core) against the real
 * development backend and the development app's dev server, with a real MCP server that takes a
 * personal API key (`keys`, the whoami server of @internal/test-mcp-backends in `userCredential`
 * mode). alice stores, lists and deletes her key on the page — written the way the broker
 * demands (Backstage's cookie and the app's Origin, no token) — and the key never shows in the
 * page; the MCP server then sees her calls with it. bob follows the link of the broker's URL
 * elicitation, which opens the page's store dialog, and his MCP client's call goes through.
 *
 * Waits are for what the page shows (role locators) or for the event a client receives.
 */
/* eslint jest/expect-expect: ["warn", { "assertFunctionNames": ["expect", "**.waitFor"] }] */
import { randomBytes } from 'node:crypto';
import { startWhoamiServer, type WhoamiServer } from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Page } from 'playwright-core';
import type { BackendProcess } from '../../testing/startBackendProcess';
import { screenshot, seriousA11yViolations } from '../__testUtils__/browser';
import {
  BROWSER_STACK_START_TIMEOUT_MS,
  BrowserStack,
  sidebarLink,
  startBrowserStack,
  STEP_TIMEOUT_MS,
} from '../__testUtils__/browserStack';
import { waitForElicitationComplete } from '../brokerTestKit';

/** The broker's own token at the MCP server (lists and events; never a person's calls). */
const BROKER_TOKEN = 'broker-own-token';
/** A client that can open a URL for its user (MCP URL-mode elicitation). */
const URL_ELICITATION = { elicitation: { url: {}, form: {} } };

jest.setTimeout(STEP_TIMEOUT_MS);

describe('My connections in a real browser (Chromium, development backend and app)', () => {
  let keys: WhoamiServer;
  let stack: BrowserStack;
  let backend: BackendProcess;
  const apiKeyOwners: Record<string, string> = {};
  const clients: Client[] = [];

  beforeAll(async () => {
    keys = await startWhoamiServer({
      era: 'legacy',
      brokerToken: BROKER_TOKEN,
      apiKeys: { header: 'X-Api-Key', owners: apiKeyOwners },
    });
    stack = await startBrowserStack({
      config: {
        mcpBroker: {
          credentialEncryptionKey: randomBytes(32).toString('base64'),
          credentials: { appPagePath: '/connections' },
          servers: [
            {
              name: 'keys',
              url: keys.url,
              headers: { Authorization: `Bearer ${BROKER_TOKEN}` },
              auth: { mode: 'userCredential', header: 'X-Api-Key', description: 'an API key' },
            },
          ],
        },
      },
    });
    backend = stack.backend;
  }, BROWSER_STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close().catch(() => undefined)));
    await Promise.all([stack?.stop(), keys?.close()]);
  }, 60_000);

  /** The sidebar's link to My connections. */
  const myConnectionsLink = (page: Page) => sidebarLink(page, 'My connections');

  /** The cell saying whether the `keys` credential is stored. */
  const keysState = (page: Page, state: 'Stored' | 'Not stored') =>
    page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: /^keys/ }) })
      .getByText(state, { exact: true });

  /** An MCP client of `user` (2025-11-25) that can open URLs for them. */
  async function mcpClient(user: string) {
    const token = await backend.signIn(user);
    const client = new Client(
      { name: 'connections-e2e', version: '1.0.0' },
      {
        capabilities: URL_ELICITATION,
      },
    );
    const notifications: Array<{ method: string; params?: any }> = [];
    client.fallbackNotificationHandler = async notification => {
      notifications.push(notification);
    };
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return { client, notifications, token };
  }

  async function listed(token: string) {
    const response = await fetch(`${backend.baseUrl}/api/mcp-broker/credentials`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()).items;
  }

  const whoami = async (client: Client) =>
    JSON.parse(((await client.callTool({ name: 'keys_whoami' })) as any).content[0].text);

  it('lets alice store, list and delete her credential, never showing its value', async () => {
    const secret = `alice-key-${randomBytes(8).toString('hex')}`;
    apiKeyOwners[secret] = 'alice@keys';
    const { client, token } = await mcpClient('alice');
    const page = await stack.signIn('alice');
    await myConnectionsLink(page).click();
    await keysState(page, 'Not stored').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'connections-01-none');

    await page.getByRole('button', { name: 'Store credential for keys' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('an API key').waitFor();
    await dialog.getByLabel(/^Credential/).fill(secret);
    await dialog.getByRole('button', { name: 'Store' }).click();
    await page.getByText('Stored your credential for keys.').waitFor();
    await keysState(page, 'Stored').waitFor();
    expect(await page.content()).not.toContain(secret);
    await screenshot(page, 'connections-02-stored');
    expect(await listed(token)).toEqual([
      expect.objectContaining({ server: 'keys', stored: true, inUse: true }),
    ]);
    // The MCP server now sees alice's calls with her key.
    expect(await whoami(client)).toEqual({ principal: 'alice@keys', credential: 'api-key' });

    // Reloaded, the page still shows only that it is stored.
    await page.reload();
    await keysState(page, 'Stored').waitFor();
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('button', { name: 'Delete credential for keys' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete credential' }).click();
    await page.getByText('Deleted your credential for keys.').waitFor();
    await keysState(page, 'Not stored').waitFor();
    expect(await listed(token)).toEqual([
      expect.objectContaining({ server: 'keys', stored: false }),
    ]);
    await page.context().close();
  });

  it("opens from the broker's URL elicitation, and storing there answers the MCP client", async () => {
    const secret = `bob-key-${randomBytes(8).toString('hex')}`;
    apiKeyOwners[secret] = 'bob@keys';
    const { client, notifications } = await mcpClient('bob');
    const error = await client.callTool({ name: 'keys_whoami' }).catch(e => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe(-32042);
    const [elicitation] = error.data.elicitations;
    expect(elicitation.url).toBe(
      `${stack.app.baseUrl}/connections/keys?elicitationId=${encodeURIComponent(elicitation.elicitationId)}`,
    );

    // bob opens the link in his browser, where he is signed in to the app.
    const page = await stack.signIn('bob');
    await page.goto(elicitation.url);
    await page
      .getByText('Your MCP client sent you here to store your credential for keys')
      .waitFor();
    const dialog = page.getByRole('dialog', { name: /Your credential for keys/ });
    await dialog.getByLabel(/^Credential/).fill(secret);
    await screenshot(page, 'connections-03-elicitation');
    await dialog.getByRole('button', { name: 'Store' }).click();
    await page
      .getByText(
        'Stored your credential for keys. Go back to your MCP client and call the tool again.',
      )
      .waitFor();
    expect(await page.content()).not.toContain(secret);
    await waitForElicitationComplete(notifications, elicitation.elicitationId, 30_000);
    expect(await whoami(client)).toEqual({ principal: 'bob@keys', credential: 'api-key' });
    await page.context().close();
  });
});
