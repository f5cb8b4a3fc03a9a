/*
 * The fields of a key request, shared by the request access dialog and the edit request dialog:
 * the plan tier (chosen from the product's plans, or typed when it has none), the use case
 * (counted as one types, at most {@link MAX_USE_CASE_LENGTH} characters) and an optional expiry
 * (future dates only).
 */
import { DatePicker, Select, TextAreaField, TextField } from '@backstage/ui';
import type { Plan } from '@devportal/plugin-portal-common';
import { getLocalTimeZone, today, type DateValue } from '@internationalized/date';

/** The longest use case the API accepts. */
export const MAX_USE_CASE_LENGTH = 1000;

/** Props of {@link RequestFields}. */
export interface RequestFieldsProps {
  /** The product's plans; with none, the tier is typed. */
  plans: Plan[];
  planTier: string;
  onPlanTierChange: (planTier: string) => void;
  useCase: string;
  onUseCaseChange: (useCase: string) => void;
  expiry: DateValue | null;
  onExpiryChange: (expiry: DateValue | null) => void;
  /** Said under the typed plan tier, when the product has no plans. */
  planTierDescription?: string;
  /** Said under the expiry date. */
  expiryDescription?: string;
}

/** Inputs for a key request's plan tier, use case and expiry. */
export function RequestFields(props: RequestFieldsProps) {
  const { plans, useCase } = props;
  return (
    <>
      {plans.length > 0 ? (
        <Select
          label="Plan"
          isRequired
          options={plans.map(plan => ({
            id: plan.tier,
            label: plan.tier,
            description: plan.description,
          }))}
          value={props.planTier}
          onChange={key => props.onPlanTierChange(String(key))}
        />
      ) : (
        <TextField
          label="Plan tier"
          isRequired
          description={props.planTierDescription}
          value={props.planTier}
          onChange={props.onPlanTierChange}
        />
      )}
      <TextAreaField
        label="Use case"
        description={`${useCase.length}/${MAX_USE_CASE_LENGTH} characters`}
        value={useCase}
        onChange={props.onUseCaseChange}
        maxLength={MAX_USE_CASE_LENGTH}
      />
      <DatePicker
        label="Expires on (optional)"
        description={props.expiryDescription}
        value={props.expiry}
        onChange={props.onExpiryChange}
        minValue={today(getLocalTimeZone()).add({ days: 1 })}
      />
    </>
  );
}

/** The instant an expiry date is sent as: its start, in UTC. */
export function expiresAtOf(expiry: DateValue): string {
  return `${expiry.toString().slice(0, 10)}T00:00:00Z`;
}
