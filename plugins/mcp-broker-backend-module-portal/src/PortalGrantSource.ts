/*
 * The portal as a source of the broker's access grants (docs/contracts/mcp-access.md §5.2).
 *
 * - `listAll` pages the portal's `GET /mcp/grants` (500 a page): the broker's full sync.
 * - `onPortalEvent` follows the portal's events about MCP products and their access requests
 *   (events without an MCP `target` are ignored without a read): an approval reads the grant
 *   and upserts it (a 404 — the key is gone again — removes it); a revocation, deletion or
 *   rejection removes it by the key's uid (expiry needs no event: the broker ends a grant at its
 *   `expiresAt` itself); a product update re-reads the product's
 *   grants and replaces its group (plans and display names follow at once); a product deletion
 *   removes its group.
 *
 * Timing: the change is applied before `onPortalEvent` returns, but for at most
 * APPLY_BUDGET_MS; then it finishes in the background. The portal awaits its event's
 * subscribers, so in a backend running both plugins the broker's feed holds the change when
 * the portal's answer leaves — and a slow broker database cannot hold a portal call for long.
 *
 * Failures: a failed read or write is logged (the event type and the key or product, never a
 * body); the next full sync repairs it. Changes are applied one at a time, in arrival order.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { ResponseError } from '@backstage/errors';
import type {
  McpAccessGrant,
  McpAccessGrantSource,
  McpAccessGrantWriter,
} from '@devportal/plugin-mcp-broker-node';
import {
  isMcpAccessEvent,
  type PortalClient,
  type PortalEventPayload,
} from '@devportal/plugin-portal-common';
import { accessGrantOf, productGroup } from './accessGrantOf';

/** How long an event's change may hold the portal's call before it goes on in the background. @public */
export const APPLY_BUDGET_MS = 2_000;
/** Grants per portal page while listing. */
const PAGE_LIMIT = 500;

/** Options of {@link PortalGrantSource}. @public */
export interface PortalGrantSourceOptions {
  /** A client of the portal allowed `portal.mcpgrant.list` (a service token). */
  client: PortalClient;
  logger: LoggerService;
}

/** The portal's access requests as the broker's grants; see the file comment. @public */
export class PortalGrantSource implements McpAccessGrantSource {
  readonly id = 'portal';
  readonly #client: PortalClient;
  readonly #logger: LoggerService;
  #writer: McpAccessGrantWriter | undefined;
  /** The tail of the queue that applies changes one at a time. */
  #queue: Promise<void> = Promise.resolve();

  constructor(options: PortalGrantSourceOptions) {
    this.#client = options.client;
    this.#logger = options.logger;
  }

  async *listAll(options: { signal: AbortSignal }): AsyncIterable<readonly McpAccessGrant[]> {
    for await (const page of this.#client.listMcpGrantsPages({}, { limit: PAGE_LIMIT })) {
      if (options.signal.aborted) return;
      yield page.items.map(accessGrantOf);
    }
  }

  async start(writer: McpAccessGrantWriter): Promise<void> {
    this.#writer = writer;
  }

  /**
   * Applies what a portal event means for the grants; returns when it is applied or after
   * {@link APPLY_BUDGET_MS}. Never throws.
   */
  async onPortalEvent(payload: unknown): Promise<void> {
    const writer = this.#writer;
    if (writer === undefined || !isMcpAccessEvent(payload)) return;
    const applied = (this.#queue = this.#queue.then(() => this.#apply(writer, payload)));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>(resolve => {
      timer = setTimeout(() => resolve('late'), APPLY_BUDGET_MS);
      timer.unref?.();
    });
    const outcome = await Promise.race([applied.then(() => 'done' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      this.#logger.warn(
        `MCP access grants: applying portal event ${payload.type} of ${describe(payload.ref)} took over ${APPLY_BUDGET_MS} ms; it goes on in the background`,
      );
    }
  }

  async #apply(writer: McpAccessGrantWriter, event: PortalEventPayload): Promise<void> {
    try {
      switch (event.type) {
        case 'apikey.approved':
          await this.#readGrant(writer, event);
          return;
        case 'apikey.revoked':
        case 'apikey.expired':
        case 'apikey.deleted':
        case 'apikey.rejected':
          if (event.uid !== undefined) await writer.remove([event.uid]);
          return;
        case 'apiproduct.updated': {
          const grants: McpAccessGrant[] = [];
          for await (const page of this.#client.listMcpGrantsPages(
            { namespace: event.product.namespace, product: event.product.name },
            { limit: PAGE_LIMIT },
          )) {
            grants.push(...page.items.map(accessGrantOf));
          }
          await writer.replaceGroup(productGroup(event.product), grants);
          return;
        }
        case 'apiproduct.deleted':
          await writer.removeGroup(productGroup(event.product));
          return;
        default:
          return; // requested, secret-revealed, created: nothing to grant or take away
      }
    } catch (error) {
      this.#logger.warn(
        `MCP access grants: could not apply portal event ${event.type} of ${describe(event.ref)}; the next full sync repairs it: ${String(error).slice(0, 300)}`,
      );
    }
  }

  /** Reads one key's grant and upserts it; removes it when the portal says it is no grant. */
  async #readGrant(writer: McpAccessGrantWriter, event: PortalEventPayload): Promise<void> {
    try {
      await writer.upsert([accessGrantOf(await this.#client.getMcpGrant(event.ref))]);
    } catch (error) {
      if (error instanceof ResponseError && error.response.status === 404) {
        if (event.uid !== undefined) await writer.remove([event.uid]);
        return;
      }
      throw error;
    }
  }
}

function describe(ref: { namespace: string; name: string }): string {
  return `${ref.namespace}/${ref.name}`;
}
