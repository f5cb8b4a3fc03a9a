/*
 * The usage pages' period: the last 7, 30 or 90 UTC days, kept in the URL (`?days=`) so a
 * period can be linked and survives a reload.
 */
import { Select } from '@backstage/ui';
import { useSearchParams } from 'react-router-dom';
import { PERIODS } from './usageSeries';

const OPTIONS = PERIODS.map(days => ({ id: String(days), label: `Last ${days} days` }));

/** The period in days from the URL (30 when absent or not one of the choices), and its setter. */
export function usePeriod(): [number, (days: number) => void] {
  const [params, setParams] = useSearchParams();
  const asked = Number(params.get('days'));
  const days = (PERIODS as readonly number[]).includes(asked) ? asked : 30;
  const setDays = (next: number) =>
    setParams(
      current => {
        const updated = new URLSearchParams(current);
        updated.set('days', String(next));
        return updated;
      },
      { replace: true },
    );
  return [days, setDays];
}

/** The period picker. */
export function PeriodPicker(props: { days: number; onChange: (days: number) => void }) {
  return (
    <Select
      label="Period"
      options={OPTIONS}
      value={String(props.days)}
      onChange={key => props.onChange(Number(key ?? 30))}
    />
  );
}
