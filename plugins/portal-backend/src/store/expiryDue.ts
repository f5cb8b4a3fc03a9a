/*
 * When a key has expired (`expiresAt` at or before now): for its announcement (contract
 * mcp-access §4.5), and for the live-grant reads (§4.8), which leave expired keys out.
 * `expiresAt` is RFC 3339 as the client wrote it, possibly with an offset
 * (`2030-01-01T02:00:00+02:00`), so the stored text does not sort in time order; the database
 * narrows its candidates with a text bound that holds for every offset, and this check decides.
 */

/** RFC 3339 offsets are below 24 h either way; a text bound this far ahead holds for all. */
const MAX_OFFSET_MS = 24 * 60 * 60 * 1000;

/** Whether an `expiresAt` (RFC 3339) is at or before `now`. */
export function isExpiryDue(expiresAt: string | null | undefined, now: Date): boolean {
  if (expiresAt === null || expiresAt === undefined) return false;
  const at = Date.parse(expiresAt);
  return Number.isFinite(at) && at <= now.getTime();
}

/**
 * A text every due `expiresAt` sorts at or below: its local date and time is at most
 * {@link MAX_OFFSET_MS} past now, and `~` sorts after every character that may follow the
 * seconds (`.`, `+`, `-`, `Z`, `z`).
 */
export function dueExpiryTextBound(now: Date): string {
  return `${new Date(now.getTime() + MAX_OFFSET_MS).toISOString().slice(0, 19)}~`;
}

/**
 * A text every `expiresAt` still in the future sorts above: its local date and time is more
 * than {@link MAX_OFFSET_MS} before now. Keys at or below it have expired whatever their
 * offset; those above it are decided by {@link isExpiryDue}.
 */
export function liveExpiryTextBound(now: Date): string {
  return new Date(now.getTime() - MAX_OFFSET_MS).toISOString().slice(0, 19);
}
