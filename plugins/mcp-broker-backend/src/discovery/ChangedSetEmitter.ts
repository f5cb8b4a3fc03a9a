/*
 * Hands a watcher's derived set (servers of registrations, endpoints of virtual servers) to its
 * consumer only when it differs from the last one handed over, so a re-list or a resync that
 * finds nothing new changes nothing downstream; inside `batch` (a whole list being applied) it
 * waits for the end and hands over once.
 */

/** See the file comment. */
export class ChangedSetEmitter<T> {
  private lastEmitted = '[]';
  private held = false;

  /**
   * @param current - the set as it is now (compared by its JSON form)
   * @param deliver - receives the set whenever it changed
   */
  constructor(
    private readonly current: () => T[],
    private readonly deliver: (items: T[]) => void,
  ) {}

  /** Runs `apply`, then hands the set over once if it changed. */
  batch(apply: () => void): void {
    this.held = true;
    try {
      apply();
    } finally {
      this.held = false;
    }
    this.emit();
  }

  /** Hands the set over if it changed (not inside a batch). */
  emit(): void {
    if (this.held) return;
    const items = this.current();
    const serialized = JSON.stringify(items);
    if (serialized === this.lastEmitted) return;
    this.lastEmitted = serialized;
    this.deliver(items);
  }
}

/** The values `pick` gives of `entries`, in key order, leaving out undefined. */
export function sortedValues<E, T>(
  entries: ReadonlyMap<string, E>,
  pick: (entry: E) => T | undefined,
): T[] {
  return [...entries.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([, entry]) => {
      const value = pick(entry);
      return value === undefined ? [] : [value];
    });
}
