/*
 * What a call needs of a backend: its endpoint, its two channels and the era it was last
 * detected to speak. BackendConnection is one (the broker's own connection shares its channels
 * with the clients' calls: one client stack per backend); tests build one for an endpoint.
 */
import type { ProtocolEra } from '../protocol/modernEra';
import type { BackendEndpoint, BackendTransport } from './backendTransport';
import { HttpBackendTransport } from './HttpBackendTransport';
import { LegacyChannel } from './LegacyChannel';
import { ModernChannel } from './ModernChannel';
import { BackendMisbehaviours } from './BackendMisbehaviours';

/** A backend as the calls reach it. */
export interface BackendChannels {
  readonly endpoint: BackendEndpoint;
  readonly legacy: LegacyChannel;
  readonly modern: ModernChannel;
  /** The era the backend was last detected to speak; undefined before the first detection. */
  readonly era?: ProtocolEra;
  /** What the backend did wrong that the broker noticed (both channels count here). */
  readonly misbehaviours: BackendMisbehaviours;
}

/** The channels of `endpoint` over `transport` (streamable HTTP by default). */
export function channelsFor(
  endpoint: BackendEndpoint,
  requestTimeoutMs: number,
  transport: BackendTransport = HttpBackendTransport.shared,
): BackendChannels {
  const misbehaviours = new BackendMisbehaviours();
  return {
    endpoint,
    legacy: new LegacyChannel(endpoint, transport, requestTimeoutMs, misbehaviours),
    modern: new ModernChannel(endpoint, transport, requestTimeoutMs, misbehaviours),
    misbehaviours,
  };
}
