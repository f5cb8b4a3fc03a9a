/*
 * How each replica follows the access grant feed (docs/contracts/mcp-access.md §5.3, §5.4,
 * §6.8): `mcpBroker.accessGrants.pollInterval`, the fallback read for a lost notification (and
 * on SQLite, where nothing announces a write, the proof of freshness), and `staleAfter`, the age
 * of the last successful read after which grants fail closed. Read once at start-up; an invalid
 * value fails start-up naming its key.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { readOptionalDurationMs } from '../config';
import { GRANT_POLL_MS, GRANT_STALE_AFTER_MS } from './GrantIndex';

/** `mcpBroker.accessGrants.pollInterval` and `staleAfter`, typed. */
export interface GrantFeedConfig {
  readonly pollMs: number;
  readonly staleAfterMs: number;
}

/** Reads the feed settings of `mcpBroker.accessGrants`; see the file comment. */
export function readGrantFeedConfig(root: Config): GrantFeedConfig {
  const config = root.getOptionalConfig('mcpBroker.accessGrants');
  if (config === undefined) return { pollMs: GRANT_POLL_MS, staleAfterMs: GRANT_STALE_AFTER_MS };
  const pollMs = readOptionalDurationMs(
    config,
    'pollInterval',
    'mcpBroker.accessGrants.pollInterval',
    GRANT_POLL_MS,
    100,
  );
  // Unset, it follows a longer poll (a replica that polls rarely is not stale between polls).
  const staleAfterMs = readOptionalDurationMs(
    config,
    'staleAfter',
    'mcpBroker.accessGrants.staleAfter',
    Math.max(GRANT_STALE_AFTER_MS, 3 * pollMs),
  );
  if (staleAfterMs < 2 * pollMs) {
    throw new InputError(
      `Invalid duration at mcpBroker.accessGrants.staleAfter: must be at least twice ` +
        `mcpBroker.accessGrants.pollInterval (${2 * pollMs} ms), or every late poll would ` +
        'fail grants closed',
    );
  }
  return { pollMs, staleAfterMs };
}
