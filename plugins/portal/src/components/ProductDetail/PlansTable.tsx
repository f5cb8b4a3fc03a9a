/*
 * The plans a product offers (its `status.plans`, from the PlanPolicies that target its route):
 * tier, description and limits as a person reads them ("100,000 per day").
 */
import { Table, type ColumnConfig } from '@backstage/ui';
import type { Plan } from '@devportal/plugin-portal-common';
import { EmptyState } from '../shared/StateViews';
import { TextCell } from '../shared/TextCell';
import { readableColumns } from '../shared/readableColumns';
import { planNameColumns } from '../shared/planNameColumns';

const PERIODS: Record<string, string> = {
  daily: 'day',
  weekly: 'week',
  monthly: 'month',
  yearly: 'year',
};

/** `{daily: 1000}` → `1,000 per day`; other limits as `key: value`. */
export function formatLimits(limits: Record<string, unknown> | undefined): string {
  if (limits === undefined || Object.keys(limits).length === 0) return 'No limits';
  return Object.entries(limits)
    .map(([key, value]) =>
      typeof value === 'number' && PERIODS[key] !== undefined
        ? `${value.toLocaleString('en')} per ${PERIODS[key]}`
        : `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
    )
    .join(', ');
}

interface PlanRow {
  id: string;
  plan: Plan;
}

const columns: ColumnConfig<PlanRow>[] = [
  ...planNameColumns,
  {
    id: 'limits',
    label: 'Limits',
    cell: ({ plan }) => <TextCell title={formatLimits(plan.limits)} />,
  },
];

/** A product's plans. */
export function PlansTable(props: { plans: Plan[]; label: string }) {
  return (
    <section aria-label={props.label}>
      <Table
        columnConfig={readableColumns(columns)}
        data={props.plans.map(plan => ({ id: plan.tier, plan }))}
        pagination={{ type: 'none' }}
        emptyState={
          <EmptyState
            title="No plans"
            description="No PlanPolicy targets this product's route; any plan tier may be requested."
          />
        }
      />
    </section>
  );
}
