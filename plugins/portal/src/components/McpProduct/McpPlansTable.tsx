/*
 * The plans of an MCP product as quota tables: tier, description and each tool-call quota in
 * words ("5 tool calls per day (UTC)"), with the tool globs that match none of the server's
 * current tools marked (when the server's tools are known).
 */
import { Cell, Flex, Table, Text, type ColumnConfig } from '@backstage/ui';
import { describeToolCallLimit } from '@devportal/plugin-portal-common';
import { EmptyState } from '../shared/StateViews';
import { planNameColumns } from '../shared/planNameColumns';
import { globsMatchingNoTool, NO_QUOTA_TEXT, type McpPlan } from './mcpPlans';

interface PlanRow {
  id: string;
  plan: McpPlan;
}

/** The quotas of one plan, one line each, with unmatched globs marked. */
function QuotaList(props: { plan: McpPlan; tools?: readonly string[] }) {
  const limits = props.plan.limits.toolCalls;
  if (limits.length === 0) {
    return <Text>{NO_QUOTA_TEXT}</Text>;
  }
  return (
    <ul style={{ margin: 0, paddingLeft: 16 }}>
      {limits.map((limit, i) => {
        const unmatched = props.tools === undefined ? [] : globsMatchingNoTool(limit, props.tools);
        return (
          <li key={i}>
            <Text>{describeToolCallLimit(limit)}</Text>
            {unmatched.length > 0 && (
              <Text color="secondary" variant="body-small">
                {' '}
                — {unmatched.join(', ')} matches no tool now
              </Text>
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** Props of {@link McpPlansTable}. */
export interface McpPlansTableProps {
  plans: McpPlan[];
  /** The server's own tool names, to mark globs matching none; unknown: nothing is marked. */
  tools?: readonly string[];
  label: string;
}

/** An MCP product's plans and their quotas. */
export function McpPlansTable(props: McpPlansTableProps) {
  const columns: ColumnConfig<PlanRow>[] = [
    ...planNameColumns,
    {
      id: 'quotas',
      label: 'Tool-call quotas',
      cell: ({ plan }) => (
        <Cell>
          <Flex direction="column">
            <QuotaList plan={plan} tools={props.tools} />
          </Flex>
        </Cell>
      ),
    },
  ];
  return (
    <section aria-label={props.label}>
      <Table
        columnConfig={columns}
        data={props.plans.map(plan => ({ id: plan.tier, plan }))}
        pagination={{ type: 'none' }}
        emptyState={<EmptyState title="No plans" />}
      />
    </section>
  );
}
