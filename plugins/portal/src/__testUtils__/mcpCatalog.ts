/*
 * The catalog and product list the MCP tools page reads for its "More MCP servers" card, for
 * component tests: an in-memory catalog (@backstage/catalog-client's test client, with the
 * catalog's own filter semantics) and a fake portal API listing the given products.
 */
import type { Entity } from '@backstage/catalog-model';
import { catalogApiRef } from '@backstage/plugin-catalog-react';
import { catalogApiMock } from '@backstage/plugin-catalog-react/testUtils';
import type { ApiProduct } from '@devportal/plugin-portal-common';
import { portalApiRef } from '../apis/PortalApi';
import { fakePortalApi, pagesOf } from './fakes';

/** The APIs of a catalog holding `entities` and a portal listing `products`. */
export function catalogAndProducts(entities: Entity[], products: ApiProduct[]) {
  const portal = fakePortalApi({ listApiProductsPages: jest.fn(() => pagesOf(products)) });
  return [
    [catalogApiRef, catalogApiMock({ entities })],
    [portalApiRef, portal],
  ] as const;
}

/** A catalog without MCP servers and a portal without products. */
export function noOtherServers() {
  return catalogAndProducts([], []);
}
