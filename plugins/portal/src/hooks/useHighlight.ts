/*
 * The server a link asked for (`/mcp?server=<name>`, e.g. from the server's catalog entity):
 * which one it is, and an element ref that, once the element shows, scrolls it into view and
 * moves focus to it, so keyboard and screen-reader users land where sighted users look.
 */
import { useEffect, useRef } from 'react';
import { useSearchParams } from 'react-router-dom';

/** The `server` the page's address asks to highlight, if any. */
export function useHighlightedServer(): string | undefined {
  const [params] = useSearchParams();
  return params.get('server') ?? undefined;
}

/** The props that mark a highlighted element, and the ref that brings it into view. */
export function useHighlight<T extends HTMLElement>(highlighted: boolean) {
  const ref = useRef<T>(null);
  useEffect(() => {
    if (!highlighted) return;
    // jsdom has no scrollIntoView; browsers all do.
    ref.current?.scrollIntoView?.({ block: 'start' });
    ref.current?.focus({ preventScroll: true });
  }, [highlighted]);
  return {
    ref,
    props: highlighted
      ? {
          'aria-current': true as const,
          tabIndex: -1,
          style: {
            outline: '2px solid var(--bui-ring)',
            outlineOffset: 2,
            borderRadius: 'var(--bui-radius-3, 8px)',
          },
        }
      : {},
  };
}
