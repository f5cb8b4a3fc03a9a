/*
 * The MCP source of a new product (contract mcp-access §3.4, §8): a server or endpoint from the
 * catalog that the person's refs own (all of them for holders of `portal.apiproduct.update.all`),
 * the product's namespace (a DNS-1123 label), the owner — fixed to the server's, as the server
 * will set it — and the plan editor with the server's tool names suggested.
 */
import { Flex, Select, Text, TextField } from '@backstage/ui';
import { mcpTargetKey } from '@devportal/plugin-portal-common';
import { useEffect } from 'react';
import { useMcpServerChoices, type McpServerChoice } from '../../hooks/useMcpServerEntity';
import { ErrorState } from '../shared/StateViews';
import { PlanEditor } from './PlanEditor';
import type { PlanDraft } from './mcpPlanDrafts';
import { nameProblem } from './productFields';

/** What the MCP source fields hold. */
export interface McpSourceDraft {
  /** `mcpTargetKey` of the chosen server or endpoint (`MCPServer/example`). */
  target?: string;
  /** The chosen server's catalog entry, once the catalog has answered. */
  server?: McpServerChoice;
  namespace: string;
  plans: PlanDraft[];
}

/** Props of {@link McpSourceFields}. */
export interface McpSourceFieldsProps {
  /** Whether a choice may be offered by the person (they own it, or may update every product). */
  offerable: (choice: McpServerChoice) => boolean;
  draft: McpSourceDraft;
  onChange: (draft: McpSourceDraft) => void;
}

/** Server, namespace, owner and plans of a new MCP product (read from the catalog when shown). */
export function McpSourceFields(props: McpSourceFieldsProps) {
  const { draft, onChange } = props;
  const choices = useMcpServerChoices();
  const offered = (choices.value ?? []).filter(props.offerable);
  const chosen = offered.find(choice => mcpTargetKey(choice.target) === draft.target);
  let placeholder = 'Choose a server';
  if (choices.loading) placeholder = 'Loading MCP servers…';
  else if (offered.length === 0) placeholder = 'You own none';
  // The page keeps the chosen entry (its target and owner make the body).
  useEffect(() => {
    if (chosen !== draft.server) onChange({ ...draft, server: chosen });
  }, [chosen, draft, onChange]);
  return (
    <Flex direction="column" gap="4">
      {choices.error !== undefined && (
        <ErrorState title="Could not read the MCP servers from the catalog" error={choices.error} />
      )}
      <Select
        label="MCP server"
        description="Servers and endpoints in the catalog that you (or one of your groups) own"
        isRequired
        options={offered.map(choice => ({
          id: mcpTargetKey(choice.target),
          label: `${choice.target.kind === 'MCPServer' ? 'MCP server' : 'MCP endpoint'} ${choice.target.name}`,
          description: choice.title,
        }))}
        value={draft.target ?? null}
        onChange={key =>
          props.onChange({ ...draft, target: key === null ? undefined : String(key) })
        }
        placeholder={placeholder}
      />
      <TextField
        label="Namespace"
        description="The product's namespace: a DNS-1123 label"
        isRequired
        value={draft.namespace}
        onChange={namespace => props.onChange({ ...draft, namespace })}
        validate={value => (value === '' ? null : (nameProblem(value) ?? null))}
        validationBehavior="aria"
      />
      {chosen !== undefined && (
        <Text>
          Owner: {chosen.owner ?? 'the catalog default'} (an MCP product is always owned by its
          server&apos;s owner)
        </Text>
      )}
      <PlanEditor
        plans={draft.plans}
        onChange={plans => props.onChange({ ...draft, plans })}
        toolNames={chosen?.toolNames ?? []}
      />
    </Flex>
  );
}
