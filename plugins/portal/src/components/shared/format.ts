/* Dates and references as a person reads them on the portal's pages. */
import type { ObjectRef } from '@devportal/plugin-portal-common';

// The reader's own locale; times in UTC, said so, as the API's timestamps are.
const dateTime = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
});

/** E.g. `Mar 12, 2026, 2:05 PM UTC` (the reader's locale); '' for an absent date. */
export function formatDateTime(iso: string | undefined): string {
  if (iso === undefined) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${dateTime.format(date)} UTC`;
}

/** `namespace/name`, the way the portal's records are addressed. */
export function refText(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** `user:default/alice` → `alice`; other refs as they are. */
export function shortEntityRef(ref: string | undefined): string {
  if (ref === undefined) return '';
  const match = /^user:default\/(.+)$/.exec(ref);
  return match ? match[1] : ref;
}
