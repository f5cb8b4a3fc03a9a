/*
 * Where the broker sends a person to store a personal credential (spec §11): the URL of a
 * URL-mode elicitation, and the page named when a credential is refused or a write is refused.
 * With `mcpBroker.credentials.appPagePath` and `app.baseUrl` set, that is the Backstage app's
 * "My connections" page (`@devportal/plugin-portal`, in the app's look, with the person's other
 * connections); without them, the broker's own minimal page (`/connect/<server>`, always served),
 * so a broker installed without the portal frontend still has a working link. The path is an
 * admin's choice because the app decides where it mounts the page (RHDH's `dynamicRoutes`).
 */
import type { Config } from '@backstage/config';

/** The `mcpBroker.credentials.appPagePath` key. */
const APP_PAGE_PATH_KEY = 'mcpBroker.credentials.appPagePath';

/** Where a person stores their credential for a server. */
export interface CredentialPageLocation {
  /** The page for `server` (absolute URL, no query). */
  pageUrl(server: string): string;
  /**
   * The app's page (origin and lower-case path, no trailing `/`), when it is the one used: a
   * backend's own URL elicitation may not point there (urlElicitations.ts).
   */
  appPage?: { origin: string; path: string };
}

/**
 * Reads the page location: the app's page when `mcpBroker.credentials.appPagePath` and
 * `app.baseUrl` are set, else the broker's own page under `brokerBaseUrl`. Throws (start-up
 * fails) on a path that does not start with `/`.
 */
export function readCredentialPageLocation(
  config: Config,
  brokerBaseUrl: string,
): CredentialPageLocation {
  const path = config.getOptionalString(APP_PAGE_PATH_KEY);
  const appBaseUrl = config.getOptionalString('app.baseUrl');
  if (path === undefined || appBaseUrl === undefined) {
    return { pageUrl: server => `${brokerBaseUrl}/connect/${server}` };
  }
  if (!path.startsWith('/') || path.includes('?') || path.includes('#')) {
    throw new Error(
      `${APP_PAGE_PATH_KEY} must be a path in the Backstage app starting with "/", such as /connections; got "${path.slice(0, 100)}"`,
    );
  }
  const base = new URL(appBaseUrl);
  const pagePath = `${base.pathname.replace(/\/+$/, '')}${path.replace(/\/+$/, '')}`;
  return {
    pageUrl: server => `${base.origin}${pagePath}/${server}`,
    appPage: { origin: base.origin, path: pagePath.toLowerCase() },
  };
}
