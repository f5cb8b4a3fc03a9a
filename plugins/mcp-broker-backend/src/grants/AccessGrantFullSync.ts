/*
 * The full sync of the access grant sources (docs/contracts/mcp-access.md §5.3): it reads every
 * live grant of each source through `listAll` and makes the source's part of the feed say the
 * same, repairing what an event that never arrived (a replica that died between the portal's
 * commit and the module's write, an events backend that was down) left out. It runs as a
 * scheduled task (one replica at a time on PostgreSQL), at start-up and then on its schedule.
 *
 * Guarantees: a sync applies only when it has read every page (an error or an abort changes
 * nothing); rows a delta wrote after the walk began are left alone (store.syncSource); a source
 * that fails does not stop the others. A source that lists more than MAX_SYNCED_GRANTS grants is
 * refused whole, so a runaway source cannot fill the broker's memory.
 */
import {
  readSchedulerServiceTaskScheduleDefinitionFromConfig,
  type LoggerService,
  type RootConfigService,
  type SchedulerServiceTaskScheduleDefinition,
} from '@backstage/backend-plugin-api';
import type { McpAccessGrant } from '@devportal/plugin-mcp-broker-node';
import type { AccessGrantSources } from './AccessGrantSources';
import type { AccessGrantStore } from './AccessGrantStore';
import { prefixed } from './grantSourceWriter';

/** The most grants one source may list in a full sync. */
export const MAX_SYNCED_GRANTS = 200_000;

/** The full sync's default schedule: every 60 s, 30 s at most, first run at start-up. */
const DEFAULT_SCHEDULE: SchedulerServiceTaskScheduleDefinition = {
  frequency: { seconds: 60 },
  timeout: { seconds: 30 },
  initialDelay: { seconds: 0 },
};

/** The full sync's schedule: `mcpBroker.accessGrants.fullSync`, or the default. */
export function readAccessGrantSyncSchedule(
  config: RootConfigService,
): SchedulerServiceTaskScheduleDefinition {
  const key = 'mcpBroker.accessGrants.fullSync';
  return config.has(key)
    ? readSchedulerServiceTaskScheduleDefinitionFromConfig(config.getConfig(key))
    : DEFAULT_SCHEDULE;
}

/** Options of {@link AccessGrantFullSync}. */
export interface AccessGrantFullSyncOptions {
  sources: AccessGrantSources;
  store: AccessGrantStore;
  logger: LoggerService;
  /** Runs after a sync changed the feed (this replica's index reads it at once). */
  onWritten: () => Promise<void>;
}

/** What one full sync did. */
export interface FullSyncOutcome {
  /** When it ended (ISO 8601). */
  at: string;
  /** False when a source failed. */
  ok: boolean;
  /** Sources whose grants it repaired in the feed. */
  changed: number;
}

/** Runs the full sync of every source; see the file comment. */
export class AccessGrantFullSync {
  readonly #options: AccessGrantFullSyncOptions;
  #lastRun: FullSyncOutcome | undefined;

  constructor(options: AccessGrantFullSyncOptions) {
    this.#options = options;
  }

  /** One sync of every source, one after the other; `signal` aborts it (nothing is applied). */
  async run(signal: AbortSignal): Promise<void> {
    let ok = true;
    let changed = 0;
    for (const source of this.#options.sources.list()) {
      if (signal.aborted) return;
      try {
        const since = await this.#options.store.revision();
        const grants: McpAccessGrant[] = [];
        for await (const page of source.listAll({ signal })) {
          if (signal.aborted) return;
          grants.push(...prefixed(source.id, page));
          if (grants.length > MAX_SYNCED_GRANTS) {
            throw new Error(`it listed more than ${MAX_SYNCED_GRANTS} grants`);
          }
        }
        const result = await this.#options.store.syncSource(source.id, grants, since);
        if (result !== undefined) {
          this.#options.logger.info(
            `MCP access grant full sync of source "${source.id}" repaired the feed (revision ${result.revision}; ${grants.length} live grants listed)`,
          );
          changed += 1;
          await this.#options.onWritten();
        }
      } catch (error) {
        ok = false;
        this.#options.logger.warn(
          `MCP access grant full sync of source "${source.id}" failed; nothing was changed, the next run tries again: ${error}`,
        );
      }
    }
    this.#lastRun = { at: new Date().toISOString(), ok, changed };
  }

  /** The last complete run (for `/status`): when, whether every source synced, how many changed. */
  lastRun(): FullSyncOutcome | undefined {
    return this.#lastRun;
  }
}
