import { screen } from '@testing-library/react';
import { Route, Routes, useLocation } from 'react-router-dom';
import { portalApiRef } from '../../apis/PortalApi';
import {
  apiKey,
  fakePortalApi,
  pagesOf,
  permissions,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { RequestLinkPage } from './RequestLinkPage';

function Where() {
  const location = useLocation();
  return <p>at {`${location.pathname}${location.search}`}</p>;
}

const routes = (
  <Routes>
    <Route path="/portal/requests/:namespace/:name" element={<RequestLinkPage />} />
    <Route path="*" element={<Where />} />
  </Routes>
);

describe('RequestLinkPage, where notifications link (fake portal API)', () => {
  it("opens My keys for the person's own request, found on a later page", async () => {
    const portal = fakePortalApi({
      listMyRequestsPages: jest.fn(() =>
        pagesOf(
          [apiKey({ name: 'other', product: 'toystore' })],
          [apiKey({ name: 'mine', product: 'toystore' })],
        ),
      ),
    });
    await renderPortal(routes, {
      initialRouteEntries: ['/portal/requests/toystore/mine'],
      apis: [[portalApiRef, portal], permissions()],
    });
    expect(await screen.findByText('at /portal/keys')).toBeInTheDocument();
    expect(portal.listMyRequestsPages).toHaveBeenCalledWith({ namespace: 'toystore' });
  });

  it("opens the approval queue in the request's namespace for someone else's request", async () => {
    const portal = fakePortalApi({ listMyRequestsPages: jest.fn(() => pagesOf([])) });
    await renderPortal(routes, {
      initialRouteEntries: ['/portal/requests/toystore/theirs'],
      apis: [[portalApiRef, portal], permissions()],
    });
    expect(await screen.findByText('at /portal/approvals?namespace=toystore')).toBeInTheDocument();
  });

  it("shows the server's message when the person's requests cannot be read", async () => {
    const failure = await serverError(503, 'The portal store is unreachable');
    const portal = fakePortalApi({
      listMyRequestsPages: jest.fn(() =>
        (async function* failing() {
          throw failure;
        })(),
      ),
    });
    await renderPortal(routes, {
      initialRouteEntries: ['/portal/requests/toystore/x'],
      apis: [[portalApiRef, portal], permissions()],
    });
    expect(await screen.findByRole('alert')).toHaveTextContent('The portal store is unreachable');
  });
});
