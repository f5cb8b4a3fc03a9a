/*
 * The portal's events on Backstage's events service (spec §11): one event per state
 * change, on topic `portal`, for other plugins (the catalog module, audit pipelines,
 * chat bots). A payload names records and people only: never a secret, never a body.
 * Only the payload travels across replicas (the events backend's bus drops metadata), so
 * everything a subscriber needs is in it.
 */
import type { ObjectRef } from './types';

/** The events service topic the portal publishes on. @public */
export const PORTAL_EVENTS_TOPIC = 'portal';

/** What happened, one per kind of state change. @public */
export type PortalEventType =
  | 'apiproduct.created'
  | 'apiproduct.updated'
  | 'apiproduct.deleted'
  | 'apikey.requested'
  | 'apikey.approved'
  | 'apikey.rejected'
  | 'apikey.deleted'
  | 'apikey.revoked'
  | 'apikey.expired'
  | 'apikey.secret-revealed';

/**
 * The payload of a portal event.
 *
 * @public
 */
export interface PortalEventPayload {
  /** What happened. */
  type: PortalEventType;
  /** The record that changed (the product for `apiproduct.*`, the key for `apikey.*`). */
  ref: ObjectRef;
  /**
   * Who made the change: a user entity ref, `system:automatic-approval`, or
   * `system:key-expiry` (for `apikey.expired`, announced once when an Approved key's
   * `expiresAt` has passed; the key itself is unchanged).
   */
  actor: string;
  /** The product concerned (the record itself for `apiproduct.*`). */
  product: ObjectRef;
  /**
   * The product's target, so a subscriber can skip what is not its own without a read
   * (contract mcp-access §4.7). Absent on events of older portals.
   */
  target?: { kind: 'HTTPRoute' | 'MCPServer' | 'MCPEndpoint'; name: string };
  /** The record's `metadata.uid` (the key's for `apikey.*`). Absent on events of older portals. */
  uid?: string;
}

/** Whether an event payload is a portal event about an MCP product or one of its access requests. @public */
export function isMcpAccessEvent(payload: unknown): payload is PortalEventPayload {
  const target = (payload as Partial<PortalEventPayload> | null)?.target;
  return (
    typeof (payload as Partial<PortalEventPayload> | null)?.type === 'string' &&
    (target?.kind === 'MCPServer' || target?.kind === 'MCPEndpoint') &&
    typeof target.name === 'string'
  );
}

/** Whether an event payload is a portal event of an API product. @public */
export function isApiProductEvent(payload: unknown): payload is PortalEventPayload {
  const type = (payload as Partial<PortalEventPayload> | null)?.type;
  const product = (payload as Partial<PortalEventPayload> | null)?.product;
  return (
    typeof type === 'string' &&
    type.startsWith('apiproduct.') &&
    typeof product?.namespace === 'string' &&
    typeof product?.name === 'string'
  );
}
