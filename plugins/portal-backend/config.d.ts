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
     * Read once at start-up; a missing file, invalid YAML, another kind, a wrong
     * apiVersion or a document without `metadata.namespace` fails start-up with a message
     * naming the file and document. Default: none.
     */
    manifests?: string[];
  };
}
