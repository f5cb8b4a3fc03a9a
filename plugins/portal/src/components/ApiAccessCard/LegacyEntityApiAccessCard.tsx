/* The "API access" card on a legacy-system entity page. */
import { useEntity } from '@backstage/plugin-catalog-react';
import { ApiAccessCard } from './ApiAccessCard';

/** The card for the entity of the surrounding entity page (portal page at `portalBasePath`). */
export function LegacyEntityApiAccessCard(props: { portalBasePath?: string }) {
  const { entity } = useEntity();
  return <ApiAccessCard entity={entity} portalBasePath={props.portalBasePath ?? '/portal'} />;
}
