/*
 * The CancellationStore on the plugin's database (see src/backend/CancellationRelay.ts and
 * migrations/20261127000000_cancellations.js). A poll is one statement per 500 sessions: the
 * live sessions among those asked about, left-joined with their unexpired cancellations, so the
 * replica holding calls learns both what was cancelled and which sessions ended elsewhere.
 * Rows are only inserted (by the replica that got the notification) and deleted (by the one
 * that acted on them, or the sweep); duplicates are harmless (acting twice is a no-op).
 */
import type { Knex } from 'knex';
import type {
  CancellationPoll,
  CancellationStore,
  RelayedCancellation,
} from '../backend/CancellationRelay';
import { chunksOf, CLIENT_SESSIONS_TABLE } from './DatabaseClientSessionStore';

/** Table of relayed cancellations (see migrations/). */
export const CANCELLATIONS_TABLE = 'mcp_broker_cancellations';

/** {@link CancellationStore} shared by every replica through the plugin's database. */
export class DatabaseCancellationStore implements CancellationStore {
  constructor(private readonly knex: Knex) {}

  async record(cancellation: RelayedCancellation, expiresAt: number): Promise<void> {
    await this.knex(CANCELLATIONS_TABLE).insert({
      client_session_id: cancellation.sessionId,
      request_key: cancellation.requestKey,
      reason: cancellation.reason ?? null,
      expires_at: expiresAt,
    });
  }

  async poll(sessionIds: readonly string[], now: number): Promise<CancellationPoll> {
    const liveSessions = new Set<string>();
    const cancellations: RelayedCancellation[] = [];
    for (const chunk of chunksOf(sessionIds)) {
      const rows: Array<{
        session_id: string;
        request_key: string | null;
        reason: string | null;
      }> = await this.knex(`${CLIENT_SESSIONS_TABLE} as s`)
        .leftJoin(`${CANCELLATIONS_TABLE} as c`, join =>
          join.on('c.client_session_id', '=', 's.id').andOnVal('c.expires_at', '>', now),
        )
        .whereIn('s.id', chunk)
        .andWhere('s.expires_at', '>', now)
        .select('s.id as session_id', 'c.request_key', 'c.reason');
      for (const row of rows) {
        liveSessions.add(row.session_id);
        if (row.request_key === null) continue;
        cancellations.push({
          sessionId: row.session_id,
          requestKey: row.request_key,
          ...(row.reason === null ? {} : { reason: row.reason }),
        });
      }
    }
    return { liveSessions, cancellations };
  }

  async remove(cancellations: readonly RelayedCancellation[]): Promise<void> {
    for (const chunk of chunksOf(cancellations)) {
      await this.knex(CANCELLATIONS_TABLE)
        .where(any => {
          for (const c of chunk) {
            any.orWhere({ client_session_id: c.sessionId, request_key: c.requestKey });
          }
        })
        .delete();
    }
  }

  async deleteExpired(now: number): Promise<void> {
    await this.knex(CANCELLATIONS_TABLE).where('expires_at', '<=', now).delete();
  }
}
