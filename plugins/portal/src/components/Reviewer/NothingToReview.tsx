/*
 * What the reviewer pages (Approvals, All keys) show a person with nothing to review — someone
 * who owns no API product and is no admin — instead of an empty queue they could never fill:
 * why, and the way to their own keys.
 */
import { ButtonLink } from '@backstage/ui';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { EmptyState } from '../shared/StateViews';

/** The explanation for a person with nothing to review, with a link to My keys. */
export function NothingToReview(props: { title: string; description: string }) {
  const paths = usePortalPaths();
  return (
    <EmptyState
      title={props.title}
      description={props.description}
      action={
        <ButtonLink href={paths.keys} variant="secondary">
          Go to My keys
        </ButtonLink>
      }
    />
  );
}
