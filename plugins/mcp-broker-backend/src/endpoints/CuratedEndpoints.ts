/*
 * The broker's curated endpoints by name (spec §13), as the router serves them. Made from
 * `mcpBroker.endpoints` at start-up; `replace` swaps in a new set (config reload) and tells which
 * names went away, so their sessions can be ended. A lookup always sees one whole set.
 */
import { CuratedEndpoint } from './CuratedEndpoint';
import type { CuratedEndpointConfig } from './endpointConfig';

/** What the router needs of the endpoints: one by name. */
export interface EndpointLookup {
  /** The endpoint named `name`, or undefined when there is none. */
  get(name: string): CuratedEndpoint | undefined;
}

/** The endpoints of this replica; see the file comment. */
export class CuratedEndpoints implements EndpointLookup {
  #byName: ReadonlyMap<string, CuratedEndpoint>;

  constructor(configs: readonly CuratedEndpointConfig[]) {
    this.#byName = byName(configs);
  }

  get(name: string): CuratedEndpoint | undefined {
    return this.#byName.get(name);
  }

  /** Every endpoint, in config order. */
  list(): CuratedEndpoint[] {
    return [...this.#byName.values()];
  }

  /** Serves `configs` from now on; answers the names no longer served. */
  replace(configs: readonly CuratedEndpointConfig[]): string[] {
    const previous = this.#byName;
    this.#byName = byName(configs);
    return [...previous.keys()].filter(name => !this.#byName.has(name));
  }
}

function byName(configs: readonly CuratedEndpointConfig[]): Map<string, CuratedEndpoint> {
  return new Map(configs.map(config => [config.name, new CuratedEndpoint(config)]));
}
