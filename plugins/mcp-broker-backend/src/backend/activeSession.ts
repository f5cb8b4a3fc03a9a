/*
 * The broker's own session with a backend MCP server, in either era: what BackendConnection
 * holds between era detection and the next reconnect, and what its event stream and its lists
 * are read over.
 */
import type { LegacySession } from './LegacyChannel';

/**
 * The broker's own session with a backend: a 2025-11-25 session from `initialize`, or a
 * 2026-07-28 backend's `server/discover` answer (no session: each request carries its `_meta`).
 */
export type ActiveSession =
  | ({ readonly era: 'legacy' } & LegacySession)
  | {
      readonly era: 'modern';
      readonly protocolVersion: string;
      readonly capabilities: Record<string, unknown>;
      /** Its `server/discover` declared the tasks extension (removed from `capabilities`). */
      readonly tasksExtension?: boolean;
    };
