/*
 * Renders a portal component in a test app with fresh permission decisions: usePermission caches
 * decisions in SWR's global cache, which would carry one test's answers into the next.
 */
import { renderInTestApp, type TestAppOptions } from '@backstage/frontend-test-utils';
import { act } from '@testing-library/react';
import { SWRConfig } from 'swr';

/**
 * renderInTestApp with an empty permission decision cache. Resolves once the loads the first
 * render started with already-settled fakes have set their state, inside `act` (else React
 * warns that those updates were not wrapped in it).
 */
export async function renderPortal(element: JSX.Element, options?: TestAppOptions) {
  const result = renderInTestApp(
    <SWRConfig value={{ provider: () => new Map() }}>{element}</SWRConfig>,
    options,
  );
  await act(async () => {});
  return result;
}
