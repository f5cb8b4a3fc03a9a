/*
 * The tier and description columns every plans table starts with (an HTTPRoute product's plans
 * and an MCP product's quota plans), so both tables read alike.
 */
import type { ColumnConfig } from '@backstage/ui';
import { TextCell } from './TextCell';

/** The tier and description columns of a plans table (an HTTPRoute product's or an MCP one's). */
export const planNameColumns: ColumnConfig<{
  id: string;
  plan: { tier: string; description?: string };
}>[] = [
  {
    id: 'tier',
    label: 'Plan',
    isRowHeader: true,
    cell: ({ plan }) => <TextCell title={plan.tier} />,
  },
  {
    id: 'description',
    label: 'Description',
    cell: ({ plan }) => <TextCell title={plan.description ?? '—'} />,
  },
];
