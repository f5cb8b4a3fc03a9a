/*
 * What every browser test starts: the real development backend, the development app's dev server
 * pointed at it, and a headless Chromium — plus a signed-in window per person. The app compiles
 * while the backend starts (it learns the backend's URL afterwards); the backend allows the
 * app's origin (CORS), as `yarn start` configures it.
 *
 * Failure modes: a start that takes longer than the timeout rejects with the process's own
 * message (startBackendProcess, startDevApp); whatever did start is stopped by `stop()`, which
 * is safe to call on a half-started stack.
 */
import type { Browser, Locator, Page } from 'playwright-core';
import { BackendProcess, startBackendProcess } from '../../testing/startBackendProcess';
import { launchChromium, newAppContext } from './browser';
import { DevApp, startDevApp } from './startDevApp';

/** The window the issue-42 walk used (a laptop). */
export const BROWSER_VIEWPORT = { width: 1280, height: 800 };

/** A test step's own bound (`jest.setTimeout`); each wait inside is for something the page shows. */
export const STEP_TIMEOUT_MS = 180_000;

/**
 * The bound for {@link startBrowserStack} (a `beforeAll` timeout): the app compiles beside the
 * backend, which on a shared two-core machine takes minutes.
 */
export const BROWSER_STACK_START_TIMEOUT_MS = 420_000;

/** How long the backend may take to start while the app compiles beside it. */
const BACKEND_START_TIMEOUT_MS = 300_000;

/** A link of the development app's sidebar. */
export function sidebarLink(page: Page, name: string): Locator {
  return page
    .getByRole('navigation', { name: 'sidebar nav' })
    .getByRole('link', { name, exact: true });
}

/** A theme of the development app (Backstage's built-in ones). */
export type AppTheme = 'light' | 'dark';

/** The local storage key Backstage's theme selector keeps the chosen theme under. */
const THEME_STORAGE_KEY = 'theme';

/** The running backend, app and browser of a browser test. */
export interface BrowserStack {
  app: DevApp;
  backend: BackendProcess;
  browser: Browser;
  /**
   * A browser window of its own (fresh context: cookies, session storage) signed in as `user`
   * on the app's development sign-in page; resolves once the app's sidebar is there. `theme`
   * picks the app's theme as its settings page does (the `theme` key in local storage, set
   * before the app loads); by default the app's own choice (light).
   */
  signIn(
    user: string,
    options?: { viewport?: { width: number; height: number }; theme?: AppTheme },
  ): Promise<Page>;
  /** Closes the browser and stops the app and the backend (whatever of them started). */
  stop(): Promise<void>;
}

/**
 * Starts the development backend (with `config` merged over its app-config; `app.baseUrl` and
 * `backend.cors.origin` are set to the app's), the development app pointed at it, and Chromium.
 */
export async function startBrowserStack(
  options: { config?: Record<string, unknown> } = {},
): Promise<BrowserStack> {
  const app = await startDevApp();
  let backend: BackendProcess | undefined;
  let browser: Browser | undefined;
  const stop = async () => {
    await browser?.close();
    await Promise.all([app.stop(), backend?.stop()]);
  };
  const backendStarting = startBackendProcess({
    startTimeoutMs: BACKEND_START_TIMEOUT_MS,
    config: {
      ...options.config,
      app: { baseUrl: app.baseUrl },
      backend: { cors: { origin: app.baseUrl } },
    },
  });
  try {
    [backend] = await Promise.all([backendStarting, app.ready]);
    await app.useBackend(backend.baseUrl);
    browser = await launchChromium();
  } catch (error) {
    // The app may fail while the backend still starts: wait for it, so that stop() ends it.
    backend ??= await backendStarting.catch(() => undefined);
    await stop();
    throw error;
  }
  const started = { backend: backend!, browser: browser! };
  return {
    app,
    ...started,
    stop,
    async signIn(user, { viewport = BROWSER_VIEWPORT, theme } = {}) {
      const context = await newAppContext(started.browser, { viewport });
      if (theme !== undefined) {
        await context.addInitScript(([key, value]) => window.localStorage.setItem(key, value), [
          THEME_STORAGE_KEY,
          theme,
        ] as const);
      }
      const page = await context.newPage();
      await page.goto(app.baseUrl);
      await page.getByRole('button', { name: `Sign in as ${user}` }).click();
      await sidebarLink(page, 'API portal').waitFor();
      if (theme !== undefined) {
        // The theme is applied (Backstage marks the body), so nothing is measured in the other.
        await page.locator(`body[data-theme-mode="${theme}"]`).waitFor({ state: 'attached' });
      }
      return page;
    },
  };
}
