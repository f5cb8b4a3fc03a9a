/* The "API access" card on the entity page of the new frontend system. */
import { useRouteRef } from '@backstage/frontend-plugin-api';
import { useEntity } from '@backstage/plugin-catalog-react';
import { rootRouteRef } from '../../routes';
import { ApiAccessCard } from './ApiAccessCard';

/** The card for the entity of the surrounding entity page. */
export function EntityApiAccessCard() {
  const { entity } = useEntity();
  const portalLink = useRouteRef(rootRouteRef);
  return <ApiAccessCard entity={entity} portalBasePath={portalLink?.()} />;
}
