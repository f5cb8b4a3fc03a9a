/* requestSignal with real AbortControllers and timers: what aborts it, and what it leaves behind. */
import { getEventListeners } from 'node:events';
import { REQUEST_TIMED_OUT, requestSignal } from './requestSignal';

describe('requestSignal', () => {
  it('aborts with the parent’s reason when a parent aborts, and detaches from the others', () => {
    const lifetime = new AbortController();
    const caller = new AbortController();
    const scope = requestSignal([caller.signal, undefined, lifetime.signal], 60_000);
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(1);
    caller.abort(new Error('caller gave up'));
    expect(scope.signal.aborted).toBe(true);
    expect(scope.signal.reason).toEqual(new Error('caller gave up'));
    expect(scope.abortedParent).toBe(caller.signal);
    expect(scope.timedOut).toBe(false);
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
  });

  it('aborts at once under a parent that already aborted, without listening to anything', () => {
    const lifetime = new AbortController();
    lifetime.abort();
    const other = new AbortController();
    const scope = requestSignal([other.signal, lifetime.signal], 10);
    expect(scope.signal.aborted).toBe(true);
    expect(scope.abortedParent).toBe(lifetime.signal);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });

  it('aborts when the timeout passes and says so', async () => {
    const lifetime = new AbortController();
    const scope = requestSignal([lifetime.signal], 20);
    await new Promise(resolve => scope.signal.addEventListener('abort', resolve));
    expect(scope.timedOut).toBe(true);
    expect(scope.signal.reason).toBe(REQUEST_TIMED_OUT);
    expect(scope.abortedParent).toBeUndefined();
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
  });

  it('leaves nothing on a long-lived parent after many released requests, and no timer runs after stopTimer', async () => {
    const lifetime = new AbortController();
    for (let i = 0; i < 1000; i++) requestSignal([lifetime.signal], 20).release();
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);

    // Fake timers: "no timer fires later" is checked by running every pending timer now.
    jest.useFakeTimers();
    let stream: ReturnType<typeof requestSignal>;
    try {
      stream = requestSignal([lifetime.signal], 20);
      stream.stopTimer();
      expect(jest.getTimerCount()).toBe(0);
      jest.advanceTimersByTime(60_000);
    } finally {
      jest.useRealTimers();
    }
    expect(stream.signal.aborted).toBe(false); // the stream outlives the header timeout
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(1);
    lifetime.abort();
    expect(stream.signal.aborted).toBe(true);
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
  });
});
