/*
 * Pinned tool definitions (spec §13): what stands between a backend that changes a tool and the
 * clients that trust it.
 *
 * Per server the mode is `off`, `warn` (the default) or `enforce`. When a backend lists its tools
 * (`review`), each definition's digest (toolDigest.ts) is compared with the pin in the shared
 * store: a tool seen for the first time is pinned as it is; a changed one is, under `warn`,
 * logged, audited (`mcp-broker.tool-changed`) and pinned anew; under `enforce`, logged, audited,
 * recorded as a held change, its approvers notified, and withheld (`admits` is false: the tool is
 * left out of every list and a call to it answers as to an unknown tool) until someone approves
 * the new definition (`approve`) — or for good, after a rejection, until the backend serves the
 * pinned definition again. Only the replica whose write recorded a change reports it.
 *
 * Across replicas: each replica reviews its own backend connections' lists, so each sees a
 * change itself; an approval or rejection is a row change that other replicas read within
 * `refreshMs` (they re-read the pins of servers with a held change while there is one). Under
 * `enforce` a tool whose pin could not be read or written (the database is down) is withheld,
 * and its review is tried again at the next refresh: the mode fails closed. Under `warn` tools
 * are served whatever the store says.
 */
import type { AuditorService, LoggerService } from '@backstage/backend-plugin-api';
import type { JsonObject } from '@backstage/types';
import { PINNED_MEMBERS, pinnedDefinitionOf, toolDigest } from './toolDigest';
import type { SeenTool, ToolPinRecord, ToolPinStore } from './toolPinStore';

/** How a server's tool definitions are pinned. */
export type PinningMode = 'off' | 'warn' | 'enforce';

/** The modes, as config accepts them. */
export const PINNING_MODES: readonly PinningMode[] = ['off', 'warn', 'enforce'];

/** True for a valid {@link PinningMode}. */
export function isPinningMode(value: string): value is PinningMode {
  return (PINNING_MODES as readonly string[]).includes(value);
}

/** The auditor event id of a changed tool (the auditor prefixes the plugin id). */
export const TOOL_CHANGED_EVENT_ID = 'tool-changed';
/** The auditor event id of an approval or rejection. */
export const TOOL_PIN_DECISION_EVENT_ID = 'tool-pin-decision';

/** A change held for approval, as approvers are told of it. */
export interface HeldToolChange {
  server: string;
  tool: string;
  /** The members of the definition that changed (`description`, `inputSchema`, …). */
  changed: string[];
}

/** A server as the pins see it. */
export interface PinnedServer {
  readonly name: string;
  /** Its mode; absent: the broker's default. */
  readonly pinning?: PinningMode;
}

/** Options of {@link ToolPins}. */
export interface ToolPinsOptions {
  store: ToolPinStore;
  logger: LoggerService;
  auditor?: AuditorService;
  /** Tells the approvers of a held change (Backstage notifications); failures are logged. */
  notify?: (change: HeldToolChange) => Promise<void>;
  /** The mode of servers that name none. */
  defaultMode: PinningMode;
  /** How often servers with a held change re-read their pins (other replicas' decisions). */
  refreshMs: number;
}

/** Why a decision on a pin was refused. */
export class PinDecisionError extends Error {
  constructor(
    readonly reason: 'not-found' | 'stale',
    message: string,
  ) {
    super(message);
  }
}

function changedMembers(before: JsonObject | Record<string, unknown>, after: SeenTool): string[] {
  return PINNED_MEMBERS.filter(
    member => JSON.stringify(before[member]) !== JSON.stringify(after.definition[member]),
  );
}

/** The pins of every server on this replica; see the file comment. */
export class ToolPins {
  /** server → tool (its own name) → pin, as last read. */
  readonly #pins = new Map<string, Map<string, ToolPinRecord>>();
  /** Each server as last reviewed (its mode decides whether a refresh watches it). */
  readonly #servers = new Map<string, PinnedServer>();
  /** Servers whose last review failed: their lists, to review again at the next refresh. */
  readonly #retry = new Map<string, { server: PinnedServer; tools: Record<string, unknown>[] }>();
  /** Per server, the review in progress (reviews of one server run one after another). */
  readonly #reviews = new Map<string, Promise<void>>();
  readonly #listeners = new Set<() => void>();
  readonly #timer: NodeJS.Timeout;
  #failing = false;
  #refreshing = false;

  constructor(private readonly options: ToolPinsOptions) {
    this.#timer = setInterval(() => void this.#refresh(), options.refreshMs);
    this.#timer.unref();
  }

  /** The mode of `server`. */
  modeOf(server: PinnedServer): PinningMode {
    return server.pinning ?? this.options.defaultMode;
  }

  /** Calls `listener` whenever a pin changed what `admits` answers. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Whether clients may see and call `tool` (a backend's own definition) of `server`: always
   * under `off` and `warn`; under `enforce` only when it is the pinned definition.
   */
  admits(server: PinnedServer, tool: Record<string, unknown>): boolean {
    if (this.modeOf(server) !== 'enforce') return true;
    if (typeof tool.name !== 'string') return false;
    const pin = this.#pins.get(server.name)?.get(tool.name);
    return pin !== undefined && pin.digest === toolDigest(tool);
  }

  /**
   * Compares a backend's listed tools with their pins, records what is new or changed, and
   * reports changes (see the file comment). Resolves when the pins are current; listeners hear
   * of it when `admits` may answer differently.
   */
  review(server: PinnedServer, tools: readonly Record<string, unknown>[]): Promise<void> {
    if (this.modeOf(server) === 'off') return Promise.resolve();
    const previous = this.#reviews.get(server.name) ?? Promise.resolve();
    const next = previous.then(() => this.#review(server, [...tools]));
    this.#reviews.set(server.name, next);
    return next.finally(() => {
      if (this.#reviews.get(server.name) === next) this.#reviews.delete(server.name);
    });
  }

  /** Forgets a removed server (its pins stay in the store for when it comes back). */
  forget(server: string): void {
    this.#pins.delete(server);
    this.#servers.delete(server);
    this.#retry.delete(server);
  }

  /** Every held or rejected change, with the pinned and the new definition. */
  async pendingChanges(): Promise<ToolPinRecord[]> {
    return this.options.store.listPending();
  }

  /**
   * Pins the pending definition of a tool (`digest`: the one the approver saw; absent: the
   * current one). Every replica serves it within `refreshMs`, this one at once.
   */
  async approve(
    server: string,
    tool: string,
    digest: string | undefined,
    by: string,
  ): Promise<ToolPinRecord> {
    return this.#decide('approve', server, tool, digest, by);
  }

  /** Rejects the held definition of a tool: the pinned one stays, the tool stays withheld. */
  async reject(
    server: string,
    tool: string,
    digest: string | undefined,
    by: string,
  ): Promise<ToolPinRecord> {
    return this.#decide('reject', server, tool, digest, by);
  }

  /** Stops the refresh timer. */
  close(): void {
    clearInterval(this.#timer);
  }

  async #decide(
    decision: 'approve' | 'reject',
    server: string,
    tool: string,
    digest: string | undefined,
    by: string,
  ): Promise<ToolPinRecord> {
    const { store } = this.options;
    const current = (await store.list([server])).find(record => record.tool === tool);
    const pending = current?.pending;
    if (!current || !pending || (decision === 'reject' && pending.state !== 'held')) {
      throw new PinDecisionError(
        'not-found',
        `Tool "${tool}" of MCP server "${server}" has no ${
          decision === 'reject' ? 'held' : 'pending'
        } definition change`,
      );
    }
    const wanted = digest ?? pending.digest;
    const done =
      wanted === pending.digest &&
      (decision === 'approve'
        ? await store.approve(server, tool, wanted, by, Date.now())
        : await store.reject(server, tool, wanted, by));
    if (!done) {
      throw new PinDecisionError(
        'stale',
        `The pending definition of tool "${tool}" of MCP server "${server}" is no longer ${wanted.slice(
          0,
          12,
        )}…: reload the pending changes and decide on the current one`,
      );
    }
    await this.#audit(TOOL_PIN_DECISION_EVENT_ID, {
      server,
      tool,
      decision,
      digest: wanted,
      previousDigest: current.digest,
      by,
    });
    this.options.logger.info(
      `MCP server "${server}": ${by} ${decision === 'approve' ? 'approved' : 'rejected'} the ` +
        `changed definition of tool "${tool}"`,
    );
    await this.#load([server]);
    const updated = this.#pins.get(server)?.get(tool);
    return updated ?? current;
  }

  async #review(server: PinnedServer, tools: Record<string, unknown>[]): Promise<void> {
    this.#servers.set(server.name, server);
    const mode = this.modeOf(server);
    const { store, logger } = this.options;
    const named = tools.filter((tool): tool is Record<string, unknown> & { name: string } => {
      return typeof tool.name === 'string';
    });
    // What this replica last read already agrees (every tool pinned as served, nothing
    // pending): nothing to record, no need to read the store.
    const remembered = this.#pins.get(server.name);
    if (
      remembered !== undefined &&
      named.every(tool => {
        const pin = remembered.get(tool.name);
        return pin !== undefined && !pin.pending && pin.digest === toolDigest(tool);
      })
    ) {
      this.#retry.delete(server.name);
      return;
    }
    try {
      const seenOf = (tool: Record<string, unknown> & { name: string }): SeenTool => ({
        tool: tool.name,
        digest: toolDigest(tool),
        definition: pinnedDefinitionOf(tool),
      });
      const pins = await this.#load([server.name], false);
      const known = pins.get(server.name) ?? new Map<string, ToolPinRecord>();
      const now = Date.now();
      const firstSeen = named.filter(tool => !known.has(tool.name)).map(seenOf);
      let wrote = firstSeen.length > 0;
      if (firstSeen.length > 0) await store.pinFirstSeen(server.name, firstSeen, now);
      for (const tool of named) {
        const pin = known.get(tool.name);
        if (!pin) continue;
        const digest = toolDigest(tool);
        if (pin.digest === digest) {
          if (pin.pending) {
            await store.clearPending(server.name, tool.name, pin.digest);
            wrote = true;
          }
          continue;
        }
        if (pin.pending?.digest === digest) continue; // already held (or rejected)
        wrote = true;
        const s = seenOf(tool);
        const recorded =
          mode === 'enforce'
            ? await store.hold(server.name, s, now)
            : await store.repin(server.name, pin.digest, s, now);
        if (recorded) await this.#report(server.name, mode, pin, s);
      }
      if (wrote) await this.#load([server.name]);
      else this.#apply(pins, [server.name]);
      this.#retry.delete(server.name);
      if (this.#failing) {
        this.#failing = false;
        logger.info('MCP broker: tool pins can be read and written again');
      }
    } catch (error) {
      this.#retry.set(server.name, { server, tools });
      if (!this.#failing) {
        this.#failing = true;
        logger.warn(
          `MCP broker: could not review the tool pins of "${server.name}"${
            mode === 'enforce' ? ' (its changed and new tools are withheld meanwhile)' : ''
          }; trying again: ${error}`,
        );
      }
    }
  }

  async #report(server: string, mode: PinningMode, pin: ToolPinRecord, seen: SeenTool) {
    const changed = changedMembers(pin.definition, seen);
    const what = changed.join(', ') || 'definition';
    this.options.logger.warn(
      mode === 'enforce'
        ? `MCP server "${server}" changed tool "${seen.tool}" (${what}): withheld until someone ` +
            'with mcp-broker.tool.approve approves the new definition (GET /api/mcp-broker/pins)'
        : `MCP server "${server}" changed tool "${seen.tool}" (${what}); served as changed ` +
            '(pinning: warn)',
    );
    await this.#audit(TOOL_CHANGED_EVENT_ID, {
      server,
      tool: seen.tool,
      mode,
      action: mode === 'enforce' ? 'held' : 'repinned',
      changed,
      previousDigest: pin.digest,
      digest: seen.digest,
    });
    if (mode === 'enforce' && this.options.notify) {
      await this.options.notify({ server, tool: seen.tool, changed }).catch(error => {
        this.options.logger.warn(
          `MCP broker: could not notify the approvers of tool "${seen.tool}" of "${server}": ${error}`,
        );
      });
    }
  }

  async #audit(eventId: string, meta: JsonObject) {
    const { auditor, logger } = this.options;
    if (!auditor) return;
    try {
      const event = await auditor.createEvent({ eventId, severityLevel: 'medium', meta });
      await event.success();
    } catch (error) {
      logger.warn(`MCP broker: could not record the audit event ${eventId}: ${error}`);
    }
  }

  /** Reads the pins of `servers` from the store; applies them unless `apply` is false. */
  async #load(
    servers: readonly string[],
    apply = true,
  ): Promise<Map<string, Map<string, ToolPinRecord>>> {
    const byServer = new Map<string, Map<string, ToolPinRecord>>(
      servers.map(name => [name, new Map()]),
    );
    for (const record of await this.options.store.list(servers)) {
      byServer.get(record.server)?.set(record.tool, record);
    }
    if (apply) this.#apply(byServer, servers);
    return byServer;
  }

  /** Replaces the pins of `servers` in memory; tells listeners when anything changed. */
  #apply(byServer: Map<string, Map<string, ToolPinRecord>>, servers: readonly string[]) {
    let changed = false;
    for (const name of servers) {
      const next = byServer.get(name) ?? new Map();
      const before = this.#pins.get(name);
      if (!before || revisionsOf(before) !== revisionsOf(next)) changed = true;
      this.#pins.set(name, next);
    }
    if (changed) for (const listener of this.#listeners) listener();
  }

  /**
   * Re-reads the pins of enforced servers with a pending change (another replica may have
   * decided), and reviews again the servers whose review failed.
   */
  async #refresh() {
    if (this.#refreshing) return;
    this.#refreshing = true;
    try {
      for (const { server, tools } of [...this.#retry.values()]) await this.review(server, tools);
      const watched = [...this.#servers.values()]
        .filter(server => this.modeOf(server) === 'enforce')
        .map(server => server.name)
        .filter(name => [...(this.#pins.get(name)?.values() ?? [])].some(pin => pin.pending));
      if (watched.length > 0) await this.#load(watched);
    } catch (error) {
      this.options.logger.warn(`MCP broker: could not refresh the tool pins: ${error}`);
    } finally {
      this.#refreshing = false;
    }
  }
}

function revisionsOf(pins: ReadonlyMap<string, ToolPinRecord>): string {
  return [...pins.values()].map(pin => `${pin.tool}\u0000${pin.revision}`).join('\u0001');
}
