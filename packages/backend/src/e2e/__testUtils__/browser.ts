/*
 * A real headless Chromium for browser tests: the system's Chromium (Debian's `chromium`, or the
 * one `PORTAL_BROWSER_CHROMIUM` names — `yarn test` sets it) driven by playwright-core, since a
 * browser download is not possible here. Each launch gets a fresh profile directory
 * (Playwright's launch always creates one). Also: screenshots kept as test artifacts, and the axe
 * accessibility check (axe-core's own script injected into the page and run there).
 */
import fs from 'node:fs';
import path from 'node:path';
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Locator,
  type Page,
} from 'playwright-core';

/** Where a machine without Chromium is told to get it from. */
export const CHROMIUM_INSTALL_COMMAND = 'apt-get install -y chromium';

/** The Chromium executable: PORTAL_BROWSER_CHROMIUM, else Debian's /usr/bin/chromium. */
export function chromiumPath(): string {
  const candidate = process.env.PORTAL_BROWSER_CHROMIUM ?? '/usr/bin/chromium';
  if (!fs.existsSync(candidate)) {
    throw new Error(
      `The browser tests need Chromium and found none at ${candidate}: run \`${CHROMIUM_INSTALL_COMMAND}\` ` +
        '(or set PORTAL_BROWSER_CHROMIUM to a Chromium executable)',
    );
  }
  return candidate;
}

/**
 * How long one wait for the page may take: the development bundle is large, and on a shared
 * two-core machine under load a first page load can take over a minute.
 */
const PAGE_TIMEOUT_MS = 120_000;

/**
 * A browser window of its own (fresh cookies and storage) for the development app, deaf to the
 * development server's reload channel (its `/ws` WebSocket, answered here and never connected).
 * Every dev server of a test run rewrites the app's shared
 * `node_modules/__backstage-autodetected-plugins__.js` when it starts, and the others, which
 * watch that file, rebuild and reload their open pages: a page reloaded under a test lost what
 * the test had just done (two full runs saw it). The app itself uses no WebSocket on its origin.
 *
 * The window asks for responses unencoded (`Accept-Encoding: identity`): the dev server
 * otherwise gzips the development bundle (63 MB of JavaScript) anew for every page load, which
 * took about two thirds of a page load's time on a shared two-core machine; over loopback the
 * plain bytes arrive at once. The pages and what they do are the same either way.
 */
export async function newAppContext(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    ...options,
    extraHTTPHeaders: { 'Accept-Encoding': 'identity', ...options.extraHTTPHeaders },
  });
  context.setDefaultTimeout(PAGE_TIMEOUT_MS);
  await context.routeWebSocket(
    url => url.pathname === '/ws',
    () => {
      // Not connected to the dev server: it never hears the reload messages.
    },
  );
  return context;
}

/** Launches headless Chromium with the flags a shared CI machine needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** The directory the screenshots of a test run are kept in (a test artifact; not committed). */
export const SCREENSHOT_DIR = path.join(
  resolvePackagePath('backend'),
  'test-results',
  'browser-screenshots',
);

/** Empties {@link SCREENSHOT_DIR}, so that it holds this run's screenshots only. */
export function clearScreenshots(): void {
  fs.rmSync(SCREENSHOT_DIR, { recursive: true, force: true });
}

/**
 * The environment variable that makes a browser test run also write its screenshots into the
 * portal plugin's README set (`plugins/portal/docs/screenshots`). Off by default, so that an
 * ordinary test run never rewrites committed files.
 */
export const README_SCREENSHOTS_ENV = 'PORTAL_README_SCREENSHOTS';

/**
 * Where the portal README's screenshots go when {@link README_SCREENSHOTS_ENV} is `1` or
 * `true`, else `undefined`.
 */
export function readmeScreenshotDir(
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  const flag = env[README_SCREENSHOTS_ENV];
  if (flag !== '1' && flag !== 'true') {
    return undefined;
  }
  return path.join(
    resolvePackagePath('backend'),
    '..',
    '..',
    'plugins',
    'portal',
    'docs',
    'screenshots',
  );
}

/**
 * Saves a full-page screenshot as `<name>.png` in {@link SCREENSHOT_DIR}, and also in the
 * portal README's set when {@link readmeScreenshotDir} names one. (A failed step's screenshots
 * go elsewhere: recordFailedSteps.)
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  const readmeDir = readmeScreenshotDir();
  if (readmeDir !== undefined) {
    fs.mkdirSync(readmeDir, { recursive: true });
    fs.copyFileSync(file, path.join(readmeDir, `${name}.png`));
  }
}

/** A serious or critical axe violation, as a line a person can act on. */
function describe(violation: AxeViolation): string {
  const nodes = violation.nodes
    .slice(0, 3)
    .map(
      node => `${node.html.slice(0, 160)} (${(node.failureSummary ?? '').replace(/\s+/g, ' ')})`,
    );
  return `${violation.impact} ${violation.id}: ${violation.help} — ${nodes.join('; ')}`;
}

/** axe-core's browser script (read once; it runs in the page, never in Node). */
let axeSource: string | undefined;

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  nodes: { target: unknown[]; html: string; failureSummary?: string }[];
}

/**
 * Waits until the page has settled: every finite, time-based animation and transition has ended
 * (a row fading in, a focus ring's colour easing in), so that what is measured is the final look,
 * not a frame halfway. Endless ones (spinners) and scroll-driven ones (@backstage/ui's card
 * shadows, which follow the scroll position and never end) do not count.
 */
export async function waitForSettledAnimations(page: Page): Promise<void> {
  await page.waitForFunction(() =>
    document
      .getAnimations()
      .every(
        animation =>
          animation.playState !== 'running' ||
          animation.timeline !== document.timeline ||
          animation.effect?.getTiming().iterations === Infinity,
      ),
  );
}

/** How many times an axe run is repeated when the page changed while it ran. */
const AXE_RUNS = 4;

/**
 * The serious and critical axe violations of the page at rest (empty when none). Before each
 * axe run the page settles (see {@link waitForSettledAnimations}, and no table dimmed while it
 * loads), so that a row fading in is measured at its final colours, not halfway (axe would
 * report the half-transparent text's contrast). A run during which something started to change
 * — a transition or animation began, or a table went stale because a filter's debounced reload
 * fired only then — is thrown away and run again on the settled page; so is one the page's
 * reload cut short.
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  axeSource ??= fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  for (let run = 1; ; run++) {
    await waitForSettledAnimations(page);
    // A table that is loading its next rows shows the old ones dimmed (@backstage/ui's
    // data-stale / data-ispending, opacity 0.6) until they arrive: measured at rest, not then.
    await page.waitForFunction(
      () => document.querySelector('[data-stale="true"], [data-ispending="true"]') === null,
    );
    let measured: { violations: AxeViolation[]; changed: boolean };
    try {
      measured = await runAxe(page, axeSource);
    } catch (error) {
      // The page was loaded anew under the run (the development server reloads it when its
      // build changes): measured again once it has loaded.
      if (run === AXE_RUNS || !/Execution context was destroyed/.test(String(error))) throw error;
      await page.waitForLoadState('load');
      continue;
    }
    const { violations, changed } = measured;
    if (!changed || run === AXE_RUNS) {
      return violations
        .filter(violation => violation.impact === 'serious' || violation.impact === 'critical')
        .map(describe);
    }
  }
}

/**
 * One axe run on `page` (axe added first where the page lacks it), and whether something started
 * to change while it ran (see {@link seriousA11yViolations}).
 */
async function runAxe(
  page: Page,
  source: string,
): Promise<{ violations: AxeViolation[]; changed: boolean }> {
  const loaded = await page.evaluate(() => 'axe' in window);
  if (!loaded) await page.addScriptTag({ content: source });
  return page.evaluate(async () => {
    // Something moving or loading now (it may have begun after the settle checks, while axe was
    // being added): as good as a change during the run.
    const busy = () =>
      document.querySelector('[data-stale="true"], [data-ispending="true"]') !== null ||
      document
        .getAnimations()
        .some(
          animation =>
            animation.playState === 'running' &&
            animation.timeline === document.timeline &&
            animation.effect?.getTiming().iterations !== Infinity,
        );
    let moved = busy();
    const mark = () => {
      moved = true;
    };
    document.addEventListener('transitionrun', mark, true);
    document.addEventListener('animationstart', mark, true);
    const observer = new MutationObserver(mark);
    observer.observe(document.documentElement, {
      subtree: true,
      attributes: true,
      attributeFilter: ['data-stale', 'data-ispending'],
    });
    try {
      // react-aria's live announcer (a visually hidden log for screen readers) keeps a pending
      // button's announcement — an aria-labelledby pointing at the button — for 7 s, also after
      // the button is gone; axe then reports a nameless img there. Everything else is checked.
      const result = await (window as any).axe.run({ exclude: [['[data-live-announcer]']] });
      return { violations: result.violations as AxeViolation[], changed: moved || busy() };
    } finally {
      observer.disconnect();
      document.removeEventListener('transitionrun', mark, true);
      document.removeEventListener('animationstart', mark, true);
    }
  });
}

/**
 * What a person would find wrong with the page's layout at its current size (empty when
 * nothing): the page scrolling sideways; text cut with an ellipsis (nothing on these pages
 * offers the rest on demand, so cut text is unreadable); a control (button, link, field)
 * sticking out of its table cell, or cut off by an ancestor that hides overflow instead of
 * scrolling. Controls inside a container that scrolls are reachable, so they count as shown.
 * Measured on the rendered boxes, not on screenshots.
 */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const nameOf = (element: Element) => {
      const label =
        element.getAttribute('aria-label') ?? (element.textContent ?? '').trim().slice(0, 60);
      return `<${element.tagName.toLowerCase()}> "${label}"`;
    };
    const root = document.documentElement;
    if (root.scrollWidth > window.innerWidth + 1) {
      problems.push(
        `the page scrolls sideways: ${root.scrollWidth} px wide in a ${window.innerWidth} px window`,
      );
    }
    // Visually hidden helpers (react-aria's hidden inputs, 1 px boxes) are not what people see.
    const visible = (element: Element) => {
      const rect = element.getBoundingClientRect();
      return rect.width > 1 && rect.height > 1 && getComputedStyle(element).visibility !== 'hidden';
    };
    // Live regions and visually hidden helpers (react-aria's) are clipped on purpose.
    // The app's sidebar (Backstage's, not the portal's) is left out.
    const hiddenOnPurpose = (element: Element) =>
      element.closest('[data-live-announcer], [aria-hidden="true"], [aria-label="sidebar nav"]') !==
        null ||
      getComputedStyle(element).clipPath !== 'none' ||
      getComputedStyle(element).clip !== 'auto';
    for (const element of Array.from(document.querySelectorAll('body *'))) {
      if (!visible(element) || hiddenOnPurpose(element)) continue;
      const style = getComputedStyle(element);
      if (
        style.textOverflow === 'ellipsis' &&
        element.scrollWidth > element.clientWidth + 1 &&
        (element.textContent ?? '').trim() !== ''
      ) {
        problems.push(`text cut with an ellipsis: ${nameOf(element)}`);
      }
    }
    const controls = Array.from(
      document.querySelectorAll(
        'button, a[href], input:not([type="checkbox"]):not([type="radio"]):not([type="hidden"]), textarea',
      ),
    );
    for (const control of controls) {
      if (!visible(control) || hiddenOnPurpose(control)) continue;
      const box = control.getBoundingClientRect();
      const cell = control.closest('td, th, [role="gridcell"], [role="rowheader"]');
      if (cell) {
        const c = cell.getBoundingClientRect();
        if (box.left < c.left - 1 || box.right > c.right + 1) {
          problems.push(`${nameOf(control)} sticks out of its table cell`);
          continue;
        }
      }
      for (let parent = control.parentElement; parent; parent = parent.parentElement) {
        const overflowX = getComputedStyle(parent).overflowX;
        if (overflowX === 'auto' || overflowX === 'scroll') break;
        if (overflowX !== 'hidden' && overflowX !== 'clip') continue;
        const p = parent.getBoundingClientRect();
        // A 1 px wrapper is react-aria's visually hidden one: its input is drawn elsewhere.
        if (p.width <= 1) break;
        if (box.left < p.left - 1 || box.right > p.right + 1) {
          problems.push(`${nameOf(control)} is cut off by an ancestor that hides overflow`);
          break;
        }
      }
    }
    return problems;
  });
}

/** The computed colours of an element, to compare how two controls look. */
export async function looksOf(locator: Locator): Promise<{ background: string; color: string }> {
  return locator.evaluate(element => {
    const style = getComputedStyle(element);
    return { background: style.backgroundColor, color: style.color };
  });
}
