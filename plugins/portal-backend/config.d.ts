export interface Config {
  /** Configuration of the portal backend plugin. */
  portal?: {
    /**
     * Where API products and API keys are stored.
     * `database` (default): Backstage's database for this plugin.
     * `kubernetes`: custom resources in a cluster.
     */
    storage?: 'database' | 'kubernetes';
  };
}
