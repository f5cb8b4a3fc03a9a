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
import { chromium, type Browser, type Page } from 'playwright-core';

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

/** Saves a full-page screenshot as `<name>.png` in {@link SCREENSHOT_DIR}. */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
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
 * The serious and critical axe violations of the page once it has settled (empty when none).
 * Settled: every finite, time-based animation and transition has ended — a row fading in is
 * measured at its final colours, not halfway (axe would report the half-transparent text's
 * contrast). Endless ones (spinners) and scroll-driven ones (@backstage/ui's card shadows, which
 * follow the scroll position and never end) do not count.
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
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
  axeSource ??= fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  const loaded = await page.evaluate(() => 'axe' in window);
  if (!loaded) await page.addScriptTag({ content: axeSource });
  const violations: AxeViolation[] = await page.evaluate(async () => {
    // react-aria's live announcer (a visually hidden log for screen readers) keeps a pending
    // button's announcement — an aria-labelledby pointing at the button — for 7 s, also after
    // the button is gone; axe then reports a nameless img there. Everything else is checked.
    const result = await (window as any).axe.run({ exclude: [['[data-live-announcer]']] });
    return result.violations;
  });
  return violations
    .filter(violation => violation.impact === 'serious' || violation.impact === 'critical')
    .map(describe);
}
