/*
 * The retention sweep of usage rows (docs/contracts/mcp-access.md §7.2): rows of days before
 * today − `retentionDays` (UTC) are deleted. It is one more ExpiringRecords store; the plugin runs
 * it as a scheduled task (USAGE_RETENTION_SCHEDULE: one replica at a time on PostgreSQL, hourly),
 * since a day's rows only become deletable once a day and any replica may delete them.
 */
import type { SchedulerServiceTaskScheduleDefinition } from '@backstage/backend-plugin-api';
import type { ExpiringRecords } from '../replicas/ExpirySweeper';
import { utcDayBefore, type UsageStore } from './UsageStore';

/** The sweep's schedule: hourly, at most 5 minutes a run, first run a minute after start-up. */
export const USAGE_RETENTION_SCHEDULE: SchedulerServiceTaskScheduleDefinition = {
  frequency: { hours: 1 },
  timeout: { minutes: 5 },
  initialDelay: { minutes: 1 },
};

/** See the file comment. */
export class UsageRetention implements ExpiringRecords {
  constructor(
    private readonly store: UsageStore,
    /** `mcpBroker.usage.retention`, in days. */
    private readonly retentionDays: number,
  ) {}

  /** Deletes the rows older than the retention; resolves how many were deleted. */
  deleteExpired(now: number): Promise<number> {
    return this.store.deleteBefore(utcDayBefore(now, this.retentionDays));
  }
}
