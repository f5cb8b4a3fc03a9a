/*
 * The states every page designs for besides its content: loading, empty, error (with the
 * server's message) and forbidden (naming the permission a person would ask an admin for).
 * Each is announced to assistive technology: loading as a polite status, errors as alerts.
 */
import { Alert, Box, Flex, Skeleton, Text } from '@backstage/ui';
import type { ReactNode } from 'react';
import { ErrorAlert } from './ErrorAlert';

/** A loading placeholder announced as "Loading <what>…". */
export function LoadingState(props: { what: string }) {
  return (
    <Box role="status" aria-live="polite" py="4">
      <Flex direction="column" gap="2">
        <Text color="secondary">Loading {props.what}…</Text>
        <Skeleton width="100%" height={24} />
        <Skeleton width="100%" height={24} />
      </Flex>
    </Box>
  );
}

/** Nothing to show, said plainly, with what to do next when there is something. */
export function EmptyState(props: { title: string; description?: ReactNode; action?: ReactNode }) {
  return (
    <Box py="6">
      <Flex direction="column" gap="2" align="start">
        <Text as="p" variant="body-large" weight="bold">
          {props.title}
        </Text>
        {props.description !== undefined && <Text color="secondary">{props.description}</Text>}
        {props.action}
      </Flex>
    </Box>
  );
}

/** A failed call, with the server's message. */
export function ErrorState(props: { title: string; error: unknown; action?: ReactNode }) {
  return <ErrorAlert title={props.title} error={props.error} customActions={props.action} my="3" />;
}

/** What the person may not see, and the permission that would let them. */
export function ForbiddenState(props: { what: string; permission: string }) {
  return (
    <Alert
      status="warning"
      icon
      title={`You may not see ${props.what}`}
      description={`This needs the permission ${props.permission}; ask a Backstage admin to grant it.`}
      my="3"
    />
  );
}
