/*
 * list_changed through curated endpoints (spec §13, contract §3 "Events"): a client stream opened
 * on an endpoint carries a viewer that names the endpoint as well as the credential
 * ({@link endpointViewer}); this decorator of the permission-based ListViews tells a change to such
 * a stream only when the person's view may have changed (the inner decision) and the change can
 * alter what the endpoint shows (its selection of the catalogs before and after). A change outside
 * an endpoint's servers and tools never reaches its clients.
 */
import type { ListChange, ListViews } from '../broker/ListViews';
import type { EndpointLookup } from './CuratedEndpoints';

/** Separates the credential from the endpoint's name in a viewer (neither holds a newline). */
const SEPARATOR = '\n';

/** The viewer of a stream opened with `credential` on `endpoint` (the credential alone on /mcp). */
export function endpointViewer(credential: string, endpoint: string | undefined): string {
  return endpoint === undefined ? credential : `${credential}${SEPARATOR}${endpoint}`;
}

/** A viewer's credential, and the endpoint its stream was opened on (if any). */
export function parseViewer(viewer: string): { credential: string; endpoint?: string } {
  const at = viewer.lastIndexOf(SEPARATOR);
  return at < 0
    ? { credential: viewer }
    : { credential: viewer.slice(0, at), endpoint: viewer.slice(at + 1) };
}

/** {@link ListViews} that also knows the endpoints; see the file comment. */
export class EndpointListViews implements ListViews {
  constructor(
    private readonly inner: ListViews,
    private readonly endpoints: EndpointLookup,
  ) {}

  mayHaveChanged(viewer: string, change: ListChange): boolean {
    const { credential, endpoint: name } = parseViewer(viewer);
    if (name !== undefined) {
      const endpoint = this.endpoints.get(name);
      // A removed endpoint's streams are being ended: nothing more to tell them.
      if (endpoint === undefined || !endpoint.mayHaveChanged(change)) return false;
    }
    return this.inner.mayHaveChanged(credential, change);
  }
}
