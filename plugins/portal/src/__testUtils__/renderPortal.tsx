/*
 * Renders a portal component in a test app with fresh permission decisions: usePermission caches
 * decisions in SWR's global cache, which would carry one test's answers into the next.
 */
import { renderInTestApp, type TestAppOptions } from '@backstage/frontend-test-utils';
import { SWRConfig } from 'swr';

/** renderInTestApp with an empty permission decision cache. */
export function renderPortal(element: JSX.Element, options?: TestAppOptions) {
  return renderInTestApp(
    <SWRConfig value={{ provider: () => new Map() }}>{element}</SWRConfig>,
    options,
  );
}
