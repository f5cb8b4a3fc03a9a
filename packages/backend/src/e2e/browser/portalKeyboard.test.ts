/*
 * The portal by keyboard alone and in narrow windows, in a real browser (headless Chromium
 * through playwright-core) against the real development backend and the development app's dev
 * server, one of each for the whole file.
 *
 * Keyboard: alice requests a key (product page → dialog → send), bob approves it on Approvals and
 * alice reveals it on My keys with `page.keyboard` only — Tab, Shift+Tab, Enter, Space, Escape
 * and arrows; no click and no focus() on a target. Every element focus lands on shows that it has
 * it (an outline or a box-shadow on it, or a ring drawn around it); every dialog keeps Tab inside
 * and gives focus back to what opened it.
 *
 * Narrow windows: at 1024×768 and 768×1024 the pages do not scroll sideways, no control is cut
 * off (a table's own scrolling counts as reachable) and axe finds no serious violation, text and
 * control contrast (its color-contrast rule) included. erin, who has nothing to review, never
 * sees the Approvals and All keys tabs at 1280, 1024 or 768 px — not even for a moment while
 * her role is found out (a watcher in the page notes every tab that was ever drawn).
 *
 * Dark theme: the pages with cards (a product's plans, the MCP tools) keep text at 4.5:1 or more
 * (axe's color-contrast rule) in the app's dark theme too.
 *
 * Waits are for what the page shows; a key press is followed by a check of where focus is. A
 * failing step keeps a screenshot and the address of each open window (recordFailedSteps).
 */
/* eslint jest/expect-expect: ["warn", { "assertFunctionNames": ["expect", "**.waitFor", "pressUntilFocused", "expectFocusInside"] }] */
import { startExampleMcpServer, type ExampleMcpServer } from '@internal/example-mcp-server';
import type { Locator, Page } from 'playwright-core';
import {
  layoutProblems,
  newAppContext,
  screenshot,
  seriousA11yViolations,
  waitForSettledAnimations,
} from '../__testUtils__/browser';
import { recordFailedSteps } from '../__testUtils__/recordFailedSteps';
import {
  BROWSER_STACK_START_TIMEOUT_MS,
  BROWSER_VIEWPORT,
  BrowserStack,
  startBrowserStack,
  STEP_TIMEOUT_MS,
} from '../__testUtils__/browserStack';
import { createPublishedProduct, portalCall } from '../../testing/portalHttp';
import type { BackendProcess } from '../../testing/startBackendProcess';

const PRODUCT = { namespace: 'toystore', name: 'toystore' };
/** Eight pages as three people (or four at one width as erin) on a busy two-core machine. */
const NARROW_STEP_TIMEOUT_MS = 900_000;
/** The narrow windows: a laptop with a side panel open, and a tablet held upright. */
const NARROW_VIEWPORTS = [
  { width: 1024, height: 768 },
  { width: 768, height: 1024 },
];
/** More key presses than any page here has stops between its start and a control. */
const MAX_PRESSES = 60;

/** A page of the app and what shows that it has loaded. */
interface Visit {
  path: string;
  loaded: (page: Page) => Locator;
}

const PRODUCT_PATH = `/portal/products/${PRODUCT.namespace}/${PRODUCT.name}`;
const catalog: Visit = { path: '/portal', loaded: p => p.getByRole('link', { name: /toystore/i }) };
const product: Visit = {
  path: PRODUCT_PATH,
  loaded: p => p.getByRole('region', { name: 'Plans' }).getByText('gold'),
};
const policies: Visit = {
  path: '/portal/policies',
  loaded: p => p.getByRole('heading', { name: 'RateLimitPolicies' }),
};
const mcpTools: Visit = { path: '/mcp', loaded: p => p.getByText('example_echo') };
const connections: Visit = {
  path: '/connections',
  loaded: p => p.getByText('No MCP server takes a personal credential'),
};

/**
 * Every page each fixture person sees, in the state the earlier steps leave (bob's product with
 * dave's pending request, alice's approved unrevealed gold key): alice and dave are consumers,
 * bob owns the product, carol is the portal admin, erin has no portal or MCP role.
 */
const NARROW_VISITS: Record<string, Visit[]> = {
  alice: [
    catalog,
    product,
    { path: '/portal/keys', loaded: p => p.getByRole('button', { name: /^Reveal secret of/ }) },
    policies,
    mcpTools,
    connections,
  ],
  dave: [{ path: '/portal/keys', loaded: p => p.getByRole('button', { name: /^Cancel request/ }) }],
  bob: [
    { path: PRODUCT_PATH, loaded: p => p.getByRole('button', { name: 'Unpublish' }) },
    {
      path: '/portal/products/new',
      loaded: p => p.getByRole('button', { name: 'Create product' }),
    },
    {
      path: '/portal/approvals',
      loaded: p => p.getByRole('row').filter({ hasText: 'Monthly reporting' }),
    },
    { path: '/portal/all-keys', loaded: p => p.getByRole('row').filter({ hasText: 'gold' }) },
  ],
  carol: [
    { path: '/portal/all-keys', loaded: p => p.getByRole('button', { name: /^Revoke key/ }) },
    { path: '/mcp', loaded: p => p.getByText('example_add_tool') },
  ],
  erin: [
    { path: '/portal', loaded: p => p.getByText('You may not see API products') },
    { path: PRODUCT_PATH, loaded: p => p.getByText(/^You may not see/) },
    { path: '/mcp', loaded: p => p.getByText('You may not see the MCP broker') },
  ],
};

/**
 * What the layout and axe checks find on a visited page once it is loaded and at rest (no
 * pointer over a row), with a screenshot. The whole-page check takes seconds; if the document is
 * replaced meanwhile (the full run saw the development app's dev server reload a page once, a
 * blank page in the failure record), the page is waited for and checked again, once: what is
 * checked is always a loaded page, never skipped.
 */
async function problemsAtRest(
  page: Page,
  visit: { loaded: (page: Page) => Locator },
  name: string,
): Promise<string[]> {
  for (let attempt = 1; ; attempt += 1) {
    await visit.loaded(page).first().waitFor();
    await page.mouse.move(0, 0);
    try {
      await screenshot(page, name);
      return [...(await layoutProblems(page)), ...(await seriousA11yViolations(page))];
    } catch (error) {
      const replaced = /Execution context was destroyed|navigat/i.test(String(error));
      if (!replaced || attempt > 1) throw error;
      // eslint-disable-next-line no-console
      console.warn(`${name}: the page was reloaded during its check; checking it again`);
    }
  }
}

/** The widths erin's tabs are checked at: a laptop, one with a side panel, a tablet. */
const ERIN_VIEWPORTS = [BROWSER_VIEWPORT, ...NARROW_VIEWPORTS];
/** erin's portal pages: each shows the tab bar. */
const ERIN_PORTAL_PATHS = ['/portal', '/portal/keys', '/portal/policies', PRODUCT_PATH];
/** The tabs of someone with nothing to review, in order. */
const CONSUMER_TABS = ['API products', 'My keys', 'Policies'];

/**
 * The pages with cards (on @backstage/ui's neutral surfaces), for the dark theme's contrast:
 * the product with its plans, the MCP tools as alice and carol (whose page adds the backend
 * status), and the catalog and My connections beside them.
 */
const DARK_VISITS: Record<string, Visit[]> = {
  alice: [catalog, product, mcpTools, connections],
  carol: [{ path: '/mcp', loaded: p => p.getByRole('region', { name: 'Backend status' }) }],
};

/**
 * Installed in erin's window before any page loads: notes the label of every tab of the
 * portal's tab bar that is ever drawn (`window.drawnTabs`), so a tab shown for a moment while
 * her role loads is caught too.
 */
function watchDrawnTabs(): void {
  const drawn = new Set<string>();
  (window as unknown as { drawnTabs: Set<string> }).drawnTabs = drawn;
  new MutationObserver(() => {
    for (const link of Array.from(
      document.querySelectorAll('nav[aria-label="Content navigation"] a'),
    )) {
      drawn.add((link.textContent ?? '').trim());
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });
}

jest.setTimeout(STEP_TIMEOUT_MS);

/**
 * Whether a person sees where focus is (evaluated in the page): `true` when the focused control
 * or what is drawn for it shows a ring; `'nothing focused'` when focus is on the page's body;
 * else a description of the control. Where the ring is drawn depends on the control:
 * - on the control itself: an outline (the browser's own focus ring included), or a box-shadow
 *   in @backstage/ui's ring colour (its inset rings on fields and ghost buttons; its other
 *   box-shadows are borders, drawn whether focused or not, so they do not count);
 * - on an element drawn over it, of about its box (@backstage/ui's header tabs);
 * - on its wrapper, in the ring colour: a checkbox's input is visually hidden and the box beside
 *   it, inside their label, carries the ring; a date field's segments are rung by their group;
 *   a search field's input is rung by its parent, the box it shares with its icon and clear
 *   button.
 */
function focusShown(): true | string {
  const active = document.activeElement;
  if (active === null || active === document.body) return 'nothing focused';
  const probe = document.createElement('span');
  probe.style.color = 'var(--bui-ring)';
  document.body.append(probe);
  const ringColour = getComputedStyle(probe).color;
  probe.remove();
  const outlined = (style: CSSStyleDeclaration) =>
    style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
  const ring = (element: Element) => {
    const style = getComputedStyle(element);
    return outlined(style) || style.boxShadow.includes(ringColour);
  };
  const ringInRingColour = (element: Element) => {
    const style = getComputedStyle(element);
    return (
      (outlined(style) && style.outlineColor === ringColour) || style.boxShadow.includes(ringColour)
    );
  };
  if (ring(active)) return true;
  const box = active.getBoundingClientRect();
  const drawnOver = Array.from(document.querySelectorAll('body *')).some(element => {
    if (element === active) return false;
    const other = element.getBoundingClientRect();
    return (
      Math.abs(other.left - box.left) <= 8 &&
      Math.abs(other.right - box.right) <= 8 &&
      Math.abs(other.top - box.top) <= 8 &&
      Math.abs(other.bottom - box.bottom) <= 8 &&
      ring(element)
    );
  });
  if (drawnOver) return true;
  const parent = active.parentElement;
  if (parent !== null && ringInRingColour(parent)) return true;
  const wrapper = active.closest('label, [role="group"]');
  if (
    wrapper !== null &&
    [wrapper, ...Array.from(wrapper.querySelectorAll('*'))].some(ringInRingColour)
  ) {
    return true;
  }
  const fieldLabel = (active as HTMLInputElement).labels?.[0]?.textContent ?? undefined;
  const label =
    active.getAttribute('aria-label') ??
    fieldLabel ??
    (active.textContent ?? '').trim().slice(0, 60);
  return `no focus ring on <${active.tagName.toLowerCase()}> "${label}"`;
}

/** Whether `target` is the focused element. */
const isFocused = (target: Locator) =>
  target.evaluate(element => element === document.activeElement);

/**
 * Presses `key` until `target` has focus, at most {@link MAX_PRESSES} times; every element focus
 * lands on on the way must show it.
 */
async function pressUntilFocused(page: Page, target: Locator, key = 'Tab'): Promise<void> {
  await target.waitFor();
  for (let presses = 0; ; presses++) {
    if (await isFocused(target)) return;
    if (presses === MAX_PRESSES) {
      throw new Error(`${key} pressed ${MAX_PRESSES} times never reached ${target}`);
    }
    await page.keyboard.press(key);
    await waitForSettledAnimations(page);
    const shown = await page.evaluate(focusShown);
    if (shown !== 'nothing focused') expect(shown).toBe(true);
  }
}

/**
 * Checks that `dialog` keeps focus: from its first element Shift+Tab, and then more Tabs than it
 * has controls, never take focus out of it.
 */
async function expectFocusInside(page: Page, dialog: Locator): Promise<void> {
  const inside = () => dialog.evaluate(node => node.contains(document.activeElement));
  expect(await inside()).toBe(true);
  await page.keyboard.press('Shift+Tab');
  expect(await inside()).toBe(true);
  for (let presses = 0; presses < 12; presses++) {
    await page.keyboard.press('Tab');
    expect(await inside()).toBe(true);
    await waitForSettledAnimations(page);
    expect(await page.evaluate(focusShown)).toBe(true);
  }
}

describe('the portal by keyboard and in narrow windows (Chromium, development backend and app)', () => {
  let example: ExampleMcpServer;
  let stack: BrowserStack;
  let backend: BackendProcess;
  const state: { aliceKey?: string } = {};
  /** The windows open now, by person: what a failing step keeps a screenshot of. */
  const pages: Record<string, Page> = {};
  const step = recordFailedSteps('keyboard', () => pages);

  beforeAll(async () => {
    example = await startExampleMcpServer({ port: 0 });
    stack = await startBrowserStack({
      config: { mcpBroker: { servers: [{ name: 'example', url: example.url }] } },
    });
    backend = stack.backend;
    // bob's published product (the API's default owner: its creator), and dave's request beside
    // the one alice will make, so that bob has to pick hers.
    await createPublishedProduct(backend, await backend.signIn('bob'), PRODUCT.name);
    const daves = await portalCall(backend, 'POST', '/requests', {
      token: await backend.signIn('dave'),
      body: { apiProductRef: PRODUCT, planTier: 'bronze', useCase: 'Monthly reporting' },
    });
    if (daves.status !== 201) throw new Error(`dave's request answered ${daves.status}`);
    // An approved key of alice's she has not revealed: the widest row actions on My keys.
    const gold = await portalCall(backend, 'POST', '/requests', {
      token: await backend.signIn('alice'),
      body: { apiProductRef: PRODUCT, planTier: 'gold', useCase: 'Load tests' },
    });
    if (gold.status !== 201) throw new Error(`alice's gold request answered ${gold.status}`);
    const approved = await portalCall(
      backend,
      'POST',
      `/requests/${PRODUCT.namespace}/${gold.body.metadata.name}/approve`,
      { token: await backend.signIn('bob'), body: {} },
    );
    if (approved.status !== 200) throw new Error(`approving it answered ${approved.status}`);
  }, BROWSER_STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all([stack?.stop(), example?.close()]);
  }, 60_000);

  /**
   * A browser window of its own at `path`, signed in as `user` on the development sign-in page —
   * by keyboard (Tab to the user's button, Enter).
   */
  async function signInByKeyboard(user: string, path: string): Promise<Page> {
    const context = await newAppContext(stack.browser, { viewport: BROWSER_VIEWPORT });
    const page = await context.newPage();
    pages[user] = page;
    await page.goto(`${stack.app.baseUrl}${path}`);
    const button = page.getByRole('button', { name: `Sign in as ${user}` });
    await pressUntilFocused(page, button);
    await page.keyboard.press('Enter');
    await button.waitFor({ state: 'detached' });
    return page;
  }

  const row = (scope: Page | Locator, text: string | RegExp) =>
    scope.getByRole('row').filter({ hasText: text });

  /** The first row of a table's body (a row with cells, not the header's). */
  const firstBodyRow = (table: Locator) =>
    table
      .getByRole('row')
      .filter({ has: table.page().getByRole('gridcell') })
      .first();

  it(
    'alice requests a key by keyboard; the dialog keeps focus and gives it back',
    step('request', async () => {
      const page = await signInByKeyboard(
        'alice',
        `/portal/products/${PRODUCT.namespace}/${PRODUCT.name}`,
      );
      const request = page.getByRole('button', { name: 'Request access' });
      await pressUntilFocused(page, request);

      // Opened with Enter and left with Escape: focus returns to the button.
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: /^Request access to/ });
      await dialog.waitFor();
      await expectFocusInside(page, dialog);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(await isFocused(request)).toBe(true);

      // Opened with Space this time; the plan chosen with arrows, the use case typed, sent.
      await page.keyboard.press('Space');
      await dialog.waitFor();
      const plan = dialog.getByRole('button', { name: /Plan/ });
      await pressUntilFocused(page, plan);
      await page.keyboard.press('Enter');
      const silver = page.getByRole('option', { name: /silver/ });
      await pressUntilFocused(page, silver, 'ArrowDown');
      await page.keyboard.press('Enter');
      await plan.getByText('silver').waitFor();
      await pressUntilFocused(page, dialog.getByRole('textbox', { name: 'Use case' }));
      await page.keyboard.type('The toy shop front end');
      await dialog.getByText('22/1000 characters').waitFor();
      await pressUntilFocused(page, dialog.getByRole('button', { name: 'Send request' }));
      await page.keyboard.press('Enter');
      await dialog.getByText('Request sent').waitFor();
      await expectFocusInside(page, dialog);
      await pressUntilFocused(page, dialog.getByRole('button', { name: 'Done' }));
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      expect(await isFocused(request)).toBe(true);

      const mine = await portalCall(backend, 'GET', '/requests/my', {
        token: await backend.signIn('alice'),
      });
      const silverKey = mine.body.items.find(
        (key: { spec: { planTier: string } }) => key.spec.planTier === 'silver',
      );
      state.aliceKey = silverKey.metadata.name;
      await page.context().close();
    }),
  );

  it(
    "bob approves alice's request by keyboard on Approvals",
    step('approve', async () => {
      const page = await signInByKeyboard('bob', '/portal/approvals');
      const queue = page.getByRole('region', { name: 'Pending requests' });
      const alices = row(queue, 'The toy shop front end');
      await row(queue, 'Monthly reporting').waitFor();
      // Into the table with Tab, to alice's row with the arrows, selected with Space.
      await pressUntilFocused(page, firstBodyRow(queue));
      await pressUntilFocused(page, alices, 'ArrowDown');
      await page.keyboard.press('Space');
      await page.getByRole('button', { name: 'Approve selected (1)' }).waitFor();
      expect(await alices.getByRole('checkbox').isChecked()).toBe(true);
      expect(await row(queue, 'Monthly reporting').getByRole('checkbox').isChecked()).toBe(false);

      await pressUntilFocused(page, page.getByRole('textbox', { name: 'Reason (optional)' }));
      await page.keyboard.type('Welcome aboard');
      await pressUntilFocused(page, page.getByRole('button', { name: 'Approve selected (1)' }));
      await page.keyboard.press('Enter');
      await page.getByText('1 of 1 approved').waitFor();
      await alices.waitFor({ state: 'detached' });
      await page.context().close();
    }),
  );

  it(
    'alice reveals the secret by keyboard on My keys',
    step('reveal', async () => {
      const page = await signInByKeyboard('alice', '/portal/keys');
      const keys = page.getByRole('region', { name: 'My API keys' });
      const mine = row(keys, state.aliceKey!);
      const reveal = mine.getByRole('button', { name: `Reveal secret of ${state.aliceKey}` });
      await pressUntilFocused(page, firstBodyRow(keys));
      await pressUntilFocused(page, mine, 'ArrowDown');
      await pressUntilFocused(page, reveal, 'ArrowRight');

      // Escape leaves the warning without revealing: focus is back on the button.
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.getByText('The secret can be shown only once').waitFor();
      await expectFocusInside(page, dialog);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(await isFocused(reveal)).toBe(true);

      await page.keyboard.press('Enter');
      await pressUntilFocused(page, dialog.getByRole('button', { name: 'Reveal secret' }));
      await page.keyboard.press('Enter');
      const field = dialog.getByLabel('API key secret');
      await field.waitFor();
      expect(await field.inputValue()).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      await expectFocusInside(page, dialog);
      await pressUntilFocused(
        page,
        dialog.getByRole('button', { name: 'I have stored it, close' }),
      );
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await mine.getByText(/Revealed on/).waitFor();
      // The reveal button is gone with the secret: focus goes to the key's remaining action, not
      // to the top of the page.
      await mine.getByRole('button', { name: `Revoke key ${state.aliceKey}` }).waitFor();
      expect(
        await isFocused(mine.getByRole('button', { name: `Revoke key ${state.aliceKey}` })),
      ).toBe(true);
      await page.context().close();
    }),
  );

  it(
    'keeps secondary text in a hovered row at 4.5:1 contrast or more (axe color-contrast)',
    step('hovered-row', async () => {
      const page = await stack.signIn('bob');
      pages.bob = page;
      await page.goto(`${stack.app.baseUrl}/portal/approvals`);
      const queue = page.getByRole('region', { name: 'Pending requests' });
      const daves = row(queue, 'Monthly reporting');
      // The product column's secondary line (the namespace) is what a hovered row darkens.
      await daves
        .locator('[data-color="secondary"]', { hasText: PRODUCT.namespace })
        .first()
        .waitFor();
      await daves.hover();
      expect(
        (await seriousA11yViolations(page)).filter(violation =>
          violation.includes('color-contrast'),
        ),
      ).toEqual([]);
      await page.context().close();
    }),
  );

  it.each(NARROW_VIEWPORTS)(
    'lays out every page each person sees at $width×$height without sideways scrolling, cut controls or low contrast',
    viewport =>
      step(`narrow-${viewport.width}`, async () => {
        const found: Record<string, unknown> = {};
        for (const [user, visits] of Object.entries(NARROW_VISITS)) {
          const page = await stack.signIn(user, { viewport });
          pages[user] = page;
          for (const visit of visits) {
            await page.goto(`${stack.app.baseUrl}${visit.path}`);
            const name = `narrow-${viewport.width}-${user}${visit.path.replace(/\//g, '-')}`;
            const problems = await problemsAtRest(page, visit, name);
            if (problems.length > 0) found[name] = problems;
          }
          await page.context().close();
        }
        expect(found).toEqual({});
      })(),
    NARROW_STEP_TIMEOUT_MS,
  );

  it.each(ERIN_VIEWPORTS)(
    'never shows erin, who has nothing to review, the Approvals or All keys tab at $width px',
    viewport =>
      step(`erin-tabs-${viewport.width}`, async () => {
        const page = await stack.signIn('erin', { viewport });
        pages.erin = page;
        await page.context().addInitScript(watchDrawnTabs);
        const tabBar = page.getByRole('navigation', { name: 'Content navigation' });
        for (const path of ERIN_PORTAL_PATHS) {
          // Settled: the answer that decides her role (her products, refused) has arrived and
          // the page has drawn what follows from it.
          const ownedProducts = page.waitForResponse(
            response =>
              response.url().includes('/api/portal/apiproducts?') &&
              response.url().includes('owner='),
          );
          await page.goto(`${stack.app.baseUrl}${path}`);
          expect((await ownedProducts).status()).toBe(403);
          await tabBar.getByRole('link', { name: 'Policies' }).waitFor();
          await waitForSettledAnimations(page);
          await screenshot(page, `erin-tabs-${viewport.width}${path.replace(/\//g, '-')}`);
          expect({
            path,
            shown: await tabBar.getByRole('link').allInnerTexts(),
            everDrawn: await page.evaluate(() => [
              ...(window as unknown as { drawnTabs: Set<string> }).drawnTabs,
            ]),
          }).toEqual({ path, shown: CONSUMER_TABS, everDrawn: CONSUMER_TABS });
        }
        await page.context().close();
      })(),
    NARROW_STEP_TIMEOUT_MS,
  );

  it(
    'keeps text at 4.5:1 contrast or more on the pages with cards in the dark theme (axe color-contrast)',
    step('dark-theme', async () => {
      const found: Record<string, unknown> = {};
      for (const [user, visits] of Object.entries(DARK_VISITS)) {
        const page = await stack.signIn(user, { theme: 'dark' });
        pages[user] = page;
        for (const visit of visits) {
          await page.goto(`${stack.app.baseUrl}${visit.path}`);
          await visit.loaded(page).first().waitFor();
          await page.locator('body[data-theme-mode="dark"]').waitFor({ state: 'attached' });
          await page.mouse.move(0, 0);
          const name = `dark-${user}${visit.path.replace(/\//g, '-')}`;
          await screenshot(page, name);
          const contrast = (await seriousA11yViolations(page)).filter(violation =>
            violation.includes('color-contrast'),
          );
          if (contrast.length > 0) found[name] = contrast;
        }
        await page.context().close();
      }
      expect(found).toEqual({});
    }),
    NARROW_STEP_TIMEOUT_MS,
  );
});
