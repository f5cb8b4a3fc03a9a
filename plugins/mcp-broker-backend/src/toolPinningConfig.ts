/*
 * `mcpBroker.toolPinning` (spec §13): the default mode of the servers' pinned tool definitions,
 * how often replicas re-read a held change, and who is notified of one. Read once at start-up; a
 * bad value fails start-up naming the key. A server's own `pinning` (config.ts) wins over `mode`.
 */
import { stringifyEntityRef, parseEntityRef } from '@backstage/catalog-model';
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { readOptionalDurationMs } from './config';
import { isPinningMode, PINNING_MODES, type PinningMode } from './pinning/ToolPins';

/** Default interval at which servers with a held change re-read their pins: 1 second. */
export const DEFAULT_PIN_REFRESH_MS = 1000;

/** The pinning settings, with defaults. */
export interface ToolPinningConfig {
  /** The mode of servers that name none (default `warn`). */
  readonly mode: PinningMode;
  readonly refreshMs: number;
  /**
   * Entity refs (users, groups) notified when a change is held for approval. Backstage cannot
   * list who holds a permission, so the approvers to tell are named here.
   */
  readonly notify: readonly string[];
}

/** Reads `mcpBroker.toolPinning` from the root config. */
export function readToolPinningConfig(config: Config): ToolPinningConfig {
  const section = config.getOptionalConfig('mcpBroker.toolPinning');
  const mode = section?.getOptionalString('mode') ?? 'warn';
  if (!isPinningMode(mode)) {
    throw new InputError(
      `Invalid mcpBroker.toolPinning.mode "${mode}": use ${PINNING_MODES.join(', ')}`,
    );
  }
  const notify = (section?.getOptionalStringArray('notify') ?? []).map(ref => {
    try {
      return stringifyEntityRef(parseEntityRef(ref, { defaultKind: 'user' }));
    } catch {
      throw new InputError(
        `Invalid mcpBroker.toolPinning.notify entry "${ref}": use an entity ref such as ` +
          '"group:default/platform" or "user:default/alice"',
      );
    }
  });
  return {
    mode,
    refreshMs:
      section === undefined
        ? DEFAULT_PIN_REFRESH_MS
        : readOptionalDurationMs(
            section,
            'refreshInterval',
            'mcpBroker.toolPinning.refreshInterval',
            DEFAULT_PIN_REFRESH_MS,
            100,
          ),
    notify,
  };
}
