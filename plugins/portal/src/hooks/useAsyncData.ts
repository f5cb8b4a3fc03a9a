/*
 * One asynchronous load for a component: the value, the error or the loading state, and a
 * reload. A load that an unmount or a newer load overtook never sets state.
 */
import { DependencyList, useCallback, useEffect, useRef, useState } from 'react';

/** The state of {@link useAsyncData}. */
export interface AsyncData<T> {
  loading: boolean;
  value?: T;
  error?: unknown;
  /** Loads again (keeps the current value on screen meanwhile). */
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change. */
export function useAsyncData<T>(load: () => Promise<T>, deps: DependencyList): AsyncData<T> {
  const [state, setState] = useState<{ loading: boolean; value?: T; error?: unknown }>({
    loading: true,
  });
  const generation = useRef(0);
  const [reloads, setReloads] = useState(0);
  useEffect(() => {
    const current = ++generation.current;
    setState(previous => ({ loading: true, value: previous.value }));
    load().then(
      value => {
        if (generation.current === current) setState({ loading: false, value });
      },
      error => {
        if (generation.current === current) setState({ loading: false, error });
      },
    );
    return () => {
      generation.current += 1;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, reloads]);
  const reload = useCallback(() => setReloads(n => n + 1), []);
  return { ...state, reload };
}
