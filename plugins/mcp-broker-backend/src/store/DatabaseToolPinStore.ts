/*
 * The ToolPinStore on the plugin's database, SQLite and PostgreSQL alike
 * (migrations/20261204000000_tool_pins.js). Each write is one statement whose WHERE clause
 * holds the condition it depends on, so two replicas recording the same change race safely: the
 * one whose statement changed the row gets `true`.
 */
import type { Knex } from 'knex';
import type { PinnedDefinition } from '../pinning/toolDigest';
import { toolKeyOf } from '../pinning/toolDigest';
import type { SeenTool, ToolPinRecord, ToolPinStore } from '../pinning/toolPinStore';

/** The table of pins (see migrations/). */
export const TOOL_PINS_TABLE = 'mcp_broker_tool_pins';

/** Rows per insert statement (SQLite allows 999 bound values; a row binds 6). */
const INSERT_CHUNK = 100;

interface PinRow {
  server: string;
  tool_key: string;
  tool: string;
  digest: string;
  definition: string;
  pinned_at: string | number;
  pinned_by: string | null;
  pending_digest: string | null;
  pending_definition: string | null;
  pending_state: string | null;
  pending_since: string | number | null;
  decided_by: string | null;
  revision: string | number;
}

function recordOf(row: PinRow): ToolPinRecord {
  const pending =
    row.pending_digest !== null && row.pending_definition !== null
      ? {
          digest: row.pending_digest,
          definition: JSON.parse(row.pending_definition) as PinnedDefinition,
          state: row.pending_state === 'rejected' ? ('rejected' as const) : ('held' as const),
          since: Number(row.pending_since ?? 0),
          ...(row.decided_by ? { decidedBy: row.decided_by } : {}),
        }
      : undefined;
  return {
    server: row.server,
    tool: row.tool,
    digest: row.digest,
    definition: JSON.parse(row.definition) as PinnedDefinition,
    pinnedAt: Number(row.pinned_at),
    ...(row.pinned_by ? { pinnedBy: row.pinned_by } : {}),
    ...(pending ? { pending } : {}),
    revision: Number(row.revision),
  };
}

const NO_PENDING = {
  pending_digest: null,
  pending_definition: null,
  pending_state: null,
  pending_since: null,
  decided_by: null,
};

/** {@link ToolPinStore} shared by every replica through the plugin's database. */
export class DatabaseToolPinStore implements ToolPinStore {
  constructor(private readonly knex: Knex) {}

  async list(servers?: readonly string[]): Promise<ToolPinRecord[]> {
    const query = this.knex<PinRow>(TOOL_PINS_TABLE).select('*');
    if (servers !== undefined) query.whereIn('server', [...servers]);
    const rows = (await query.orderBy(['server', 'tool'])) as PinRow[];
    return rows.map(recordOf);
  }

  async listPending(): Promise<ToolPinRecord[]> {
    const rows = (await this.knex<PinRow>(TOOL_PINS_TABLE)
      .select('*')
      .whereNotNull('pending_digest')
      .orderBy(['server', 'tool'])) as PinRow[];
    return rows.map(recordOf);
  }

  async pinFirstSeen(server: string, tools: readonly SeenTool[], now: number): Promise<void> {
    for (let i = 0; i < tools.length; i += INSERT_CHUNK) {
      const rows = tools.slice(i, i + INSERT_CHUNK).map(seen => ({
        server,
        tool_key: toolKeyOf(seen.tool),
        tool: seen.tool,
        digest: seen.digest,
        definition: JSON.stringify(seen.definition),
        pinned_at: now,
      }));
      await this.knex(TOOL_PINS_TABLE).insert(rows).onConflict(['server', 'tool_key']).ignore();
    }
  }

  async hold(server: string, seen: SeenTool, now: number): Promise<boolean> {
    const changed = await this.row(server, seen.tool)
      .whereNot('digest', seen.digest)
      .where(q => q.whereNull('pending_digest').orWhereNot('pending_digest', seen.digest))
      .update({
        pending_digest: seen.digest,
        pending_definition: JSON.stringify(seen.definition),
        pending_state: 'held',
        pending_since: now,
        decided_by: null,
        revision: this.knex.raw('revision + 1'),
      });
    return changed > 0;
  }

  async repin(server: string, fromDigest: string, seen: SeenTool, now: number): Promise<boolean> {
    const changed = await this.row(server, seen.tool)
      .where('digest', fromDigest)
      .update({
        digest: seen.digest,
        definition: JSON.stringify(seen.definition),
        pinned_at: now,
        pinned_by: null,
        ...NO_PENDING,
        revision: this.knex.raw('revision + 1'),
      });
    return changed > 0;
  }

  async clearPending(server: string, tool: string, pinnedDigest: string): Promise<void> {
    await this.row(server, tool)
      .where('digest', pinnedDigest)
      .whereNotNull('pending_digest')
      .update({ ...NO_PENDING, revision: this.knex.raw('revision + 1') });
  }

  async approve(
    server: string,
    tool: string,
    digest: string,
    by: string,
    now: number,
  ): Promise<boolean> {
    const changed = await this.row(server, tool)
      .where('pending_digest', digest)
      .update({
        digest: this.knex.ref('pending_digest'),
        definition: this.knex.ref('pending_definition'),
        pinned_at: now,
        pinned_by: by,
        ...NO_PENDING,
        revision: this.knex.raw('revision + 1'),
      });
    return changed > 0;
  }

  async reject(server: string, tool: string, digest: string, by: string): Promise<boolean> {
    const changed = await this.row(server, tool)
      .where({ pending_digest: digest, pending_state: 'held' })
      .update({
        pending_state: 'rejected',
        decided_by: by,
        revision: this.knex.raw('revision + 1'),
      });
    return changed > 0;
  }

  private row(server: string, tool: string) {
    return this.knex(TOOL_PINS_TABLE).where({ server, tool_key: toolKeyOf(tool) });
  }
}
