/*
 * An auditor test double for plugin tests (startTestBackend): it records every event the broker
 * creates, with how it ended (outcome, meta, the error's message), for the test to read.
 */
import { mockServices } from '@backstage/backend-test-utils';

/** One audit event as {@link recordingAuditor} recorded it. */
export interface RecordedAuditEvent {
  meta: Record<string, unknown>;
  end?: { outcome: string; meta: Record<string, unknown>; error?: string };
}

/** The auditor's service factory, and the events it recorded so far (in creation order). */
export function recordingAuditor() {
  const events: RecordedAuditEvent[] = [];
  const auditor = mockServices.auditor.mock({
    async createEvent(options) {
      const event: RecordedAuditEvent = { meta: { ...(options.meta as object) } };
      events.push(event);
      return {
        async success(done) {
          event.end = { outcome: 'succeeded', meta: { ...(done?.meta as object) } };
        },
        async fail(failed) {
          event.end = {
            outcome: String((failed.meta as { outcome?: unknown })?.outcome),
            meta: { ...(failed.meta as object) },
            error: failed.error.message,
          };
        },
      };
    },
  });
  return { events, factory: auditor.factory };
}
