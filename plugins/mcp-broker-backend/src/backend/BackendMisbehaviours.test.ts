import { BackendMisbehaviours, MISBEHAVIOUR_KINDS } from './BackendMisbehaviours';

describe('BackendMisbehaviours', () => {
  it('shows every class, counted with the time of the last one, and nothing else', () => {
    let now = Date.parse('2026-01-01T10:00:00.000Z');
    const misbehaviours = new BackendMisbehaviours(() => now);
    expect(Object.keys(misbehaviours.snapshot())).toEqual([...MISBEHAVIOUR_KINDS]);
    expect(misbehaviours.snapshot().mismatchedIds).toEqual({ count: 0 });
    misbehaviours.record('mismatchedIds');
    now += 5000;
    misbehaviours.record('mismatchedIds');
    misbehaviours.record('coalescedListChanged', 999);
    misbehaviours.record('timeouts', 0);
    const snapshot = misbehaviours.snapshot();
    expect(snapshot.mismatchedIds).toEqual({ count: 2, lastAt: '2026-01-01T10:00:05.000Z' });
    expect(snapshot.coalescedListChanged.count).toBe(999);
    expect(snapshot.timeouts).toEqual({ count: 0 });
    expect(misbehaviours.count('mismatchedIds')).toBe(2);
  });
});
