/*
 * The plan editor of an MCP product (contract mcp-access §8): plans with a tier, a description
 * and quota rows (calls, per minute/hour/day, optional tool globs, with the server's tool names
 * suggested). Each input is labelled with its plan and row, so a screen reader names it.
 */
import { Button, Card, CardBody, Flex, Select, Text, TextField } from '@backstage/ui';
import {
  callsProblem,
  MAX_PLANS,
  MAX_QUOTAS,
  NEW_QUOTA,
  newPlan,
  type PlanDraft,
  type QuotaDraft,
  type QuotaWindow,
} from './mcpPlanDrafts';
import { nameProblem } from './productFields';

const WINDOWS = [
  { id: 'minute', label: 'per minute' },
  { id: 'hour', label: 'per hour' },
  { id: 'day', label: 'per day (UTC)' },
];

/** Props of {@link PlanEditor}. */
export interface PlanEditorProps {
  plans: PlanDraft[];
  onChange: (plans: PlanDraft[]) => void;
  /** The server's own tool names, suggested for the globs. */
  toolNames: readonly string[];
}

/** Edits the plans of an MCP product. */
export function PlanEditor(props: PlanEditorProps) {
  const { plans } = props;
  const setPlan = (i: number, plan: PlanDraft) =>
    props.onChange(plans.map((p, k) => (k === i ? plan : p)));
  const setQuota = (i: number, j: number, quota: QuotaDraft) =>
    setPlan(i, { ...plans[i], quotas: plans[i].quotas.map((q, k) => (k === j ? quota : q)) });
  const toolsHint =
    props.toolNames.length === 0
      ? 'Tool names separated by commas, * for any run; empty: every tool together'
      : `Its tools: ${props.toolNames.join(', ')}; * for any run; empty: every tool together`;
  return (
    <Flex direction="column" gap="3">
      <Text as="h3" weight="bold">
        Plans
      </Text>
      <Text color="secondary">
        Each quota is per person: at most this many tool calls in each window. A call is refused
        when any quota that applies to it is spent.
      </Text>
      {plans.map((plan, i) => {
        const n = i + 1;
        return (
          <Card key={i}>
            <CardBody>
              <Flex direction="column" gap="2">
                <Flex gap="3" align="end" style={{ flexWrap: 'wrap' }}>
                  <TextField
                    label={`Tier of plan ${n}`}
                    isRequired
                    value={plan.tier}
                    onChange={tier => setPlan(i, { ...plan, tier })}
                    validate={value => (value === '' ? null : (nameProblem(value) ?? null))}
                    validationBehavior="aria"
                  />
                  <TextField
                    label={`Description of plan ${n}`}
                    value={plan.description}
                    onChange={description => setPlan(i, { ...plan, description })}
                  />
                  <Button
                    variant="secondary"
                    isDisabled={plans.length === 1}
                    onPress={() => props.onChange(plans.filter((_, k) => k !== i))}
                  >
                    Remove plan {n}
                  </Button>
                </Flex>
                {plan.quotas.map((quota, j) => {
                  const row = `plan ${n}, quota ${j + 1}`;
                  return (
                    <Flex key={j} gap="3" align="end" style={{ flexWrap: 'wrap' }}>
                      <TextField
                        label={`Calls of ${row}`}
                        isRequired
                        value={quota.calls}
                        onChange={calls => setQuota(i, j, { ...quota, calls })}
                        validate={value => callsProblem(value) ?? null}
                        validationBehavior="aria"
                      />
                      <Select
                        label={`Window of ${row}`}
                        options={WINDOWS}
                        value={quota.per}
                        onChange={per => setQuota(i, j, { ...quota, per: per as QuotaWindow })}
                      />
                      <TextField
                        label={`Tools of ${row}`}
                        description={toolsHint}
                        value={quota.tools}
                        onChange={tools => setQuota(i, j, { ...quota, tools })}
                      />
                      <Button
                        variant="secondary"
                        onPress={() =>
                          setPlan(i, { ...plan, quotas: plan.quotas.filter((_, k) => k !== j) })
                        }
                      >
                        Remove quota {j + 1} of plan {n}
                      </Button>
                    </Flex>
                  );
                })}
                <Flex>
                  <Button
                    variant="secondary"
                    isDisabled={plan.quotas.length >= MAX_QUOTAS}
                    onPress={() =>
                      setPlan(i, { ...plan, quotas: [...plan.quotas, { ...NEW_QUOTA }] })
                    }
                  >
                    Add a quota to plan {n}
                  </Button>
                </Flex>
              </Flex>
            </CardBody>
          </Card>
        );
      })}
      <Flex>
        <Button
          variant="secondary"
          isDisabled={plans.length >= MAX_PLANS}
          onPress={() => props.onChange([...plans, newPlan()])}
        >
          Add a plan
        </Button>
      </Flex>
    </Flex>
  );
}
