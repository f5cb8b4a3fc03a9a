/*
 * The held tool definition changes of the MCP broker (spec §13), for holders of
 * `mcp-broker.tool.approve`: per change, the pinned and the changed definition side by side — the
 * description as text, every other member that changed (schemas, annotations) as indented JSON —
 * and Approve / Reject. A decision names the digest shown, so a tool the backend changed again
 * meanwhile is refused (409) and the list reloads with the current change.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Badge, Button, Card, CardBody, CardHeader, Flex, Grid, Text } from '@backstage/ui';
import type { McpToolChange, McpToolChangeDecision } from '@devportal/plugin-mcp-broker-common';
import { useState } from 'react';
import { mcpBrokerApiRef } from '../../apis/McpBrokerApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { ErrorAlert } from '../shared/ErrorAlert';
import { formatDateTime } from '../shared/format';
import { EmptyState, ErrorState, LoadingState } from '../shared/StateViews';

/** The members of a definition that differ between the pinned and the changed one. */
export function changedMembers(change: McpToolChange): string[] {
  const members = new Set([
    ...Object.keys(change.pinned.definition),
    ...Object.keys(change.changed.definition),
  ]);
  return [...members].filter(
    member =>
      JSON.stringify(change.pinned.definition[member]) !==
      JSON.stringify(change.changed.definition[member]),
  );
}

function memberText(value: unknown): string {
  if (value === undefined) return '(none)';
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2);
}

function MemberText(props: { value: unknown }) {
  return (
    <pre
      style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', margin: 0, fontSize: '0.85em' }}
    >
      {memberText(props.value)}
    </pre>
  );
}

function ChangeCard(props: { change: McpToolChange; onDecided: () => void }) {
  const { change, onDecided } = props;
  const broker = useApi(mcpBrokerApiRef);
  const [busy, setBusy] = useState<McpToolChangeDecision | undefined>();
  const [error, setError] = useState<unknown>();
  const label = change.name ?? `${change.server} / ${change.tool}`;
  const decide = async (decision: McpToolChangeDecision) => {
    setBusy(decision);
    setError(undefined);
    try {
      await broker.decideToolChange(change.server, change.tool, decision, change.changed.digest);
      onDecided();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <section aria-label={`Change of ${label}`}>
      <Card>
        <CardHeader>
          <Flex gap="2" align="center">
            <Text as="h3" variant="body-large" weight="bold">
              {label}
            </Text>
            <Badge>{change.state === 'held' ? 'held for approval' : 'rejected'}</Badge>
          </Flex>
          <Text color="secondary">
            Server {change.server} changed it {formatDateTime(change.since)}
            {change.rejectedBy ? ` · rejected by ${change.rejectedBy}` : ''}. It is withheld from
            everyone until the change is approved.
          </Text>
        </CardHeader>
        <CardBody>
          <Flex direction="column" gap="3">
            {changedMembers(change).map(member => (
              <Flex key={member} direction="column" gap="1">
                <Text weight="bold">{member}</Text>
                <Grid.Root columns={{ initial: '1', md: '2' }} gap="3">
                  <Flex direction="column" gap="1" aria-label={`${member} as pinned`}>
                    <Text color="secondary">Pinned (served before)</Text>
                    <MemberText value={change.pinned.definition[member]} />
                  </Flex>
                  <Flex direction="column" gap="1" aria-label={`${member} as changed`}>
                    <Text color="secondary">Changed (the server serves now)</Text>
                    <MemberText value={change.changed.definition[member]} />
                  </Flex>
                </Grid.Root>
              </Flex>
            ))}
            <ErrorAlert title="The decision was not recorded" error={error} />
            <Flex gap="2">
              <Button
                variant="primary"
                isDisabled={busy !== undefined}
                isPending={busy === 'approve'}
                onPress={() => decide('approve')}
              >
                Approve the change
              </Button>
              {change.state === 'held' && (
                <Button
                  variant="secondary"
                  isDisabled={busy !== undefined}
                  isPending={busy === 'reject'}
                  onPress={() => decide('reject')}
                >
                  Reject
                </Button>
              )}
            </Flex>
          </Flex>
        </CardBody>
      </Card>
    </section>
  );
}

/** The held tool changes, each with its decision buttons. */
export function HeldToolChanges() {
  const broker = useApi(mcpBrokerApiRef);
  const changes = useAsyncData(() => broker.getToolChanges(), [broker]);
  let body;
  if (changes.value === undefined && changes.loading) body = <LoadingState what="tool changes" />;
  else if (changes.error !== undefined)
    body = <ErrorState title="Could not load the held tool changes" error={changes.error} />;
  else if ((changes.value?.changes ?? []).length === 0)
    body = (
      <EmptyState
        title="No tool changes wait for a decision"
        description="A server under pinning: enforce that changes a tool's definition shows up here."
      />
    );
  else
    body = (
      <Flex direction="column" gap="3">
        {changes.value!.changes.map(change => (
          <ChangeCard
            key={`${change.server}/${change.tool}/${change.changed.digest}`}
            change={change}
            onDecided={changes.reload}
          />
        ))}
      </Flex>
    );
  return (
    <Flex direction="column" gap="2">
      <Text as="h2" variant="title-small" weight="bold">
        Held tool changes
      </Text>
      {body}
    </Flex>
  );
}
