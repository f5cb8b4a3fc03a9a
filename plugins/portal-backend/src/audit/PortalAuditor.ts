/*
 * Audit events of the portal: every change and every secret reveal is recorded through
 * Backstage's auditor service with who (taken by the auditor from the request's
 * credentials), what (event id and the records concerned) and the outcome. Metadata is
 * built by the callers from record references only: a secret never reaches an event.
 */
import type {
  AuditorService,
  AuditorServiceEventSeverityLevel,
} from '@backstage/backend-plugin-api';
import type { JsonObject } from '@backstage/types';
import type { Request } from 'express';

/** The portal's audit event ids (kebab-case; the plugin id is added by the auditor). */
export type PortalAuditEventId =
  | 'apiproduct-create'
  | 'apiproduct-update'
  | 'apiproduct-delete'
  | 'apikey-request-create'
  | 'apikey-request-update'
  | 'apikey-request-delete'
  | 'apikey-request-review'
  | 'apikey-request-bulk-review'
  | 'apikey-request-revoke'
  | 'apikey-secret-reveal';

/** What to record about one operation. */
export interface AuditedOperation<T> {
  eventId: PortalAuditEventId;
  request: Request;
  meta: JsonObject;
  severityLevel?: AuditorServiceEventSeverityLevel;
  /** Extra metadata from the result on success (never a secret). */
  successMeta?: (result: T) => JsonObject;
}

/** Wraps operations in auditor events: initiated, then succeeded or failed. */
export class PortalAuditor {
  readonly #auditor: AuditorService;

  static create(auditor: AuditorService): PortalAuditor {
    return new PortalAuditor(auditor);
  }

  private constructor(auditor: AuditorService) {
    this.#auditor = auditor;
  }

  /** Runs `operation` inside an audit event and returns its result; failures rethrow. */
  async run<T>(options: AuditedOperation<T>, operation: () => Promise<T>): Promise<T> {
    const event = await this.#auditor.createEvent({
      eventId: options.eventId,
      severityLevel: options.severityLevel ?? 'medium',
      request: options.request,
      meta: options.meta,
    });
    let result: T;
    try {
      result = await operation();
    } catch (error) {
      await event.fail({ error: error as Error });
      throw error;
    }
    await event.success(options.successMeta ? { meta: options.successMeta(result) } : undefined);
    return result;
  }
}
