/*
 * An auditor service test double for startTestBackend that records every event the plugin
 * creates — its metadata, and how it ended — so a test can read the audit trail back.
 */
import { mockServices } from '@backstage/backend-test-utils';

/** One audit event as the plugin recorded it. */
export interface RecordedAuditEvent {
  meta: Record<string, unknown>;
  /** Set once the event ended: `succeeded`, or the outcome its failure's meta named. */
  end?: { outcome: string; meta: Record<string, unknown>; error?: string };
}

/** The auditor factory to add to the test backend's features, and the events it recorded. */
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
  return { factory: auditor.factory, events };
}
