/*
 * ListenSubscriptions: the `subscriptions/listen` streams of 2026-07-28 clients on this replica
 * (spec §9, docs/mcp-2026-07-28-notes.md §8), fed by the same list_changed fan-out as the
 * session GET streams (McpBroker's ListChangedNotifier), so both eras hear of the same changes
 * at the same moment.
 *
 * Guarantees: the acknowledgement is the first message of a stream (it is sent before the
 * stream is registered for notifications, in one synchronous step); a stream carries only the
 * kinds it was granted, each tagged with its subscription id (the listen request's JSON-RPC id,
 * as the specification requires); `closeAll` ends every stream with the `complete` result for
 * its id before closing it, and refuses new streams from then on. The registry knows no HTTP:
 * a stream reaches it as a ClientEventStream (keep-alive comments, bounded buffer, closed by its
 * owner). Failure modes: a stream that closes (client gone, too slow to read) leaves the
 * registry by its abort signal; a limit reached refuses the stream before anything is opened.
 * Limits are counted on this replica only: a listen stream lives on the replica serving it and
 * has no record in any shared store.
 */
import { randomBytes } from 'node:crypto';
import { jsonRpcResult, type JsonRpcId } from '../protocol/jsonRpc';
import type { ListKind } from '../protocol/listKinds';
import {
  subscriptionAcknowledged,
  subscriptionClosedResult,
  subscriptionListChanged,
  type SubscriptionFilter,
} from '../protocol/modernResults';
import type { ClientEventStream } from '../types';

/** Bytes of randomness in a subscription's registry key (128 bits). */
const SUBSCRIPTION_KEY_BYTES = 16;

/** Limits on listen streams (the numbers of mcpBroker.sessionLimits, counted on this replica). */
export interface ListenLimits {
  /** Open listen streams one principal may hold on this replica. */
  readonly perPrincipal: number;
  /** Open listen streams this replica serves. */
  readonly perReplica: number;
}

/** One open listen stream. */
export interface ListenSubscription {
  /** The registry's handle of this stream: ≥ 128 random bits, base64url (logs, status). */
  readonly key: string;
  /** The listen request's JSON-RPC id, which tags every message of the stream. */
  readonly subscriptionId: JsonRpcId;
  readonly principal: string;
  /** Whose view the stream carries: the credential of the listen request. */
  readonly viewer?: string;
  /** The list kinds the stream carries (what the acknowledgement granted). */
  readonly kinds: ReadonlySet<ListKind>;
  readonly stream: ClientEventStream;
}

/** Why a listen stream was not opened; `message` says what the client may do. */
export interface ListenRefusal {
  readonly refused: 'perPrincipal' | 'perReplica' | 'shutting-down';
  readonly message: string;
}

/** Arguments of {@link ListenSubscriptions.open}. */
export interface ListenOpenRequest {
  principal: string;
  /** The listen request's credential (list changes that cannot concern it are not sent). */
  viewer?: string;
  /** The listen request's JSON-RPC id. */
  subscriptionId: JsonRpcId;
  /** The honoured filter (acknowledged as is) and the kinds it grants. */
  honoured: { filter: SubscriptionFilter; kinds: ReadonlySet<ListKind> };
  /** Opens the response stream; called only when the stream is admitted. */
  openStream: () => ClientEventStream;
}

/** The listen streams of this replica and their list_changed fan-out. */
export class ListenSubscriptions {
  private readonly subscriptions = new Map<string, ListenSubscription>();
  private readonly perPrincipal = new Map<string, number>();
  private closed = false;

  constructor(private readonly limits: ListenLimits) {}

  /** Open listen streams on this replica. */
  get size(): number {
    return this.subscriptions.size;
  }

  /**
   * Admits a stream under the limits, opens it, acknowledges the honoured filter and registers
   * it for notifications; or refuses it without opening anything.
   */
  open(request: ListenOpenRequest): ListenSubscription | ListenRefusal {
    const refusal = this.refusalFor(request.principal);
    if (refusal) return refusal;
    const stream = request.openStream();
    const subscription: ListenSubscription = {
      key: randomBytes(SUBSCRIPTION_KEY_BYTES).toString('base64url'),
      subscriptionId: request.subscriptionId,
      principal: request.principal,
      viewer: request.viewer,
      kinds: new Set(request.honoured.kinds),
      stream,
    };
    stream.send(subscriptionAcknowledged(request.subscriptionId, request.honoured.filter));
    // The client may be gone already (or too slow for even the acknowledgement).
    if (stream.closed) return subscription;
    this.subscriptions.set(subscription.key, subscription);
    this.perPrincipal.set(request.principal, this.countOf(request.principal) + 1);
    stream.signal.addEventListener('abort', () => this.forget(subscription), { once: true });
    return subscription;
  }

  /** Sends a list_changed of `kind` to every stream that was granted it and that it concerns. */
  notify(kind: ListKind, audience: (viewer: string | undefined) => boolean = () => true): void {
    // 2026-07-28 has no roots/list_changed (the client owns its roots).
    if (kind === 'roots') return;
    for (const subscription of [...this.subscriptions.values()]) {
      if (!subscription.kinds.has(kind) || !audience(subscription.viewer)) continue;
      subscription.stream.send(subscriptionListChanged(subscription.subscriptionId, kind));
    }
  }

  /**
   * Ends every stream gracefully (the `complete` result for its id, then the close) and refuses
   * new ones. Idempotent. Called when the broker starts draining: a client then re-listens on
   * another replica instead of waiting for a stream that will end anyway.
   */
  closeAll(): void {
    this.closed = true;
    this.closeWhere(() => true);
  }

  /**
   * Ends the streams of the viewers in `audience` gracefully, as {@link closeAll} does (e.g.
   * those opened on a curated endpoint that was removed); new streams are still taken.
   */
  closeWhere(audience: (viewer: string | undefined) => boolean): void {
    for (const subscription of [...this.subscriptions.values()]) {
      if (!audience(subscription.viewer)) continue;
      const id = subscription.subscriptionId;
      subscription.stream.send(jsonRpcResult(id, subscriptionClosedResult(id)));
      subscription.stream.close();
    }
  }

  /** Open listen streams of one principal on this replica. */
  countOf(principal: string): number {
    return this.perPrincipal.get(principal) ?? 0;
  }

  private refusalFor(principal: string): ListenRefusal | undefined {
    if (this.closed) {
      return {
        refused: 'shutting-down',
        message:
          'The MCP broker is shutting down; send subscriptions/listen again (on another ' +
          'replica, or later)',
      };
    }
    const perPrincipal = this.limits.perPrincipal;
    if (this.countOf(principal) >= perPrincipal) {
      return {
        refused: 'perPrincipal',
        message:
          `Too many subscriptions/listen streams for ${principal.slice(0, 200)}: at most ` +
          `${perPrincipal} at once on one broker replica (mcpBroker.sessionLimits.perPrincipal). ` +
          'Close streams you no longer read',
      };
    }
    const perReplica = this.limits.perReplica;
    if (this.subscriptions.size >= perReplica) {
      return {
        refused: 'perReplica',
        message:
          `This MCP broker replica serves its maximum of ${perReplica} subscriptions/listen ` +
          'streams (mcpBroker.sessionLimits.perReplica); retry later',
      };
    }
    return undefined;
  }

  private forget(subscription: ListenSubscription) {
    if (!this.subscriptions.delete(subscription.key)) return;
    const left = this.countOf(subscription.principal) - 1;
    if (left > 0) this.perPrincipal.set(subscription.principal, left);
    else this.perPrincipal.delete(subscription.principal);
  }
}
