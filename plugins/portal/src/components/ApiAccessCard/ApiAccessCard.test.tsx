import type { Entity } from '@backstage/catalog-model';
import { portalApiKeyCreatePermission } from '@devportal/plugin-portal-common';
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { portalApiRef } from '../../apis/PortalApi';
import {
  apiKey,
  fakePortalApi,
  pagesOf,
  permissions,
  product,
  rejecting,
  serverError,
} from '../../__testUtils__/fakes';
import { renderPortal } from '../../__testUtils__/renderPortal';
import { ApiAccessCard, isPortalApiEntity } from './ApiAccessCard';

const entity: Entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'API',
  metadata: {
    name: 'toystore-toystore',
    annotations: { 'portal.devportal.io/api-product': 'toystore/toystore' },
  },
  spec: { type: 'openapi', lifecycle: 'production', owner: 'group:default/payments-team' },
};

describe('ApiAccessCard (fake portal API, fake permissions)', () => {
  it('belongs on API entities the portal made only', () => {
    expect(isPortalApiEntity(entity)).toBe(true);
    expect(isPortalApiEntity({ ...entity, kind: 'Component' })).toBe(false);
    expect(isPortalApiEntity({ ...entity, metadata: { name: 'plain' } })).toBe(false);
  });

  it("shows the product's plans, the person's keys for it and Request access", async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () => product({ name: 'toystore', displayName: 'Toystore' })),
      listMyRequestsPages: jest.fn(() =>
        pagesOf([
          apiKey({ name: 'mine-1', product: 'toystore', phase: 'Approved', planTier: 'bronze' }),
          apiKey({ name: 'other-1', product: 'another' }),
        ]),
      ),
    });
    await renderPortal(<ApiAccessCard entity={entity} portalBasePath="/portal" />, {
      apis: [[portalApiRef, portal], permissions(portalApiKeyCreatePermission)],
    });
    const plans = await screen.findByRole('region', { name: 'Plans of Toystore' });
    expect(within(plans).getByText('gold')).toBeInTheDocument();
    const keys = await screen.findByRole('region', { name: 'Your keys for Toystore' });
    expect(await within(keys).findByText('mine-1')).toBeInTheDocument();
    expect(within(keys).queryByText('other-1')).not.toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Open in the portal' })).toHaveAttribute(
      'href',
      '/portal/products/toystore/toystore',
    );
    await userEvent.click(screen.getByRole('button', { name: 'Request access' }));
    expect(await screen.findByRole('dialog', { name: 'Request access to Toystore' })).toBeVisible();
  });

  it('shows plans but no request button or keys to people who may not request keys', async () => {
    const portal = fakePortalApi({
      getApiProduct: jest.fn(async () => product({ name: 'toystore', displayName: 'Toystore' })),
    });
    await renderPortal(<ApiAccessCard entity={entity} />, {
      apis: [[portalApiRef, portal], permissions()],
    });
    await screen.findByRole('region', { name: 'Plans of Toystore' });
    expect(screen.queryByRole('button', { name: 'Request access' })).not.toBeInTheDocument();
    expect(portal.listMyRequestsPages).not.toHaveBeenCalled();
  });

  it('says the product is not available when the portal answers 404', async () => {
    const missing = await serverError(404, 'apiproduct toystore/toystore not found');
    const portal = fakePortalApi({
      getApiProduct: rejecting(missing),
    });
    await renderPortal(<ApiAccessCard entity={entity} />, {
      apis: [[portalApiRef, portal], permissions()],
    });
    expect(await screen.findByText('The API product is not available')).toBeInTheDocument();
  });
});
