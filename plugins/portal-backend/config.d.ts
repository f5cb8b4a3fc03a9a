export interface Config {
  /** Configuration of the portal backend plugin. */
  portal?: {
    /**
     * Where API products and API keys are stored.
     * `database` (default): Backstage's database for this plugin.
     * `kubernetes`: custom resources in a cluster.
     */
    storage?: 'database' | 'kubernetes';
    /**
     * Kubernetes manifest files (multi-document YAML) with the read-only kinds the
     * portal shows with the database store: HTTPRoute, PlanPolicy, AuthPolicy,
     * RateLimitPolicy. Relative paths are relative to the backend's working directory.
     * Default: none.
     */
    manifests?: string[];
  };
}
