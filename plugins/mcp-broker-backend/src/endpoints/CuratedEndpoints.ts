/*
 * The broker's curated endpoints by name (spec §13), as the router serves them. Made from
 * `mcpBroker.endpoints` at start-up; `replace` swaps in a new set (config reload) and tells which
 * names went away and which endpoints are new or changed, so their clients can be told and the
 * sessions of removed ones ended. An endpoint whose configuration is unchanged keeps its object
 * (and the narrowed views it remembers). A lookup always sees one whole set.
 */
import { CuratedEndpoint } from './CuratedEndpoint';
import type { CuratedEndpointConfig } from './endpointConfig';

/** What the router needs of the endpoints: one by name. */
export interface EndpointLookup {
  /** The endpoint named `name`, or undefined when there is none. */
  get(name: string): CuratedEndpoint | undefined;
}

/** What {@link CuratedEndpoints.replace} changed. */
export interface EndpointSetChange {
  /** Names no longer served. */
  removed: string[];
  /** Endpoints added (`previous` undefined) or whose configuration changed. */
  changed: Array<{ previous?: CuratedEndpoint; next: CuratedEndpoint }>;
}

/** The endpoints of this replica; see the file comment. */
export class CuratedEndpoints implements EndpointLookup {
  #byName: ReadonlyMap<string, CuratedEndpoint>;

  constructor(configs: readonly CuratedEndpointConfig[]) {
    this.#byName = new Map(configs.map(config => [config.name, new CuratedEndpoint(config)]));
  }

  get(name: string): CuratedEndpoint | undefined {
    return this.#byName.get(name);
  }

  /** Every endpoint, in config order. */
  list(): CuratedEndpoint[] {
    return [...this.#byName.values()];
  }

  /** Serves `configs` from now on; see {@link EndpointSetChange}. */
  replace(configs: readonly CuratedEndpointConfig[]): EndpointSetChange {
    const previous = this.#byName;
    const changed: EndpointSetChange['changed'] = [];
    const next = new Map<string, CuratedEndpoint>();
    for (const config of configs) {
      const before = previous.get(config.name);
      if (before !== undefined && sameConfig(before.config, config)) {
        next.set(config.name, before);
        continue;
      }
      const endpoint = new CuratedEndpoint(config);
      next.set(config.name, endpoint);
      changed.push(
        before === undefined ? { next: endpoint } : { previous: before, next: endpoint },
      );
    }
    this.#byName = next;
    return { removed: [...previous.keys()].filter(name => !next.has(name)), changed };
  }
}

function sameConfig(a: CuratedEndpointConfig, b: CuratedEndpointConfig): boolean {
  const comparable = (config: CuratedEndpointConfig) =>
    JSON.stringify({ ...config, overrides: [...config.overrides] });
  return comparable(a) === comparable(b);
}
