import { SchedulerServiceTaskScheduleDefinitionConfig } from '@backstage/backend-plugin-api';
import { HumanDuration } from '@backstage/types';

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
    /** Pagination of the list routes (`limit` / `continue`). */
    pagination?: {
      /**
       * The HMAC key that signs `continue` tokens (at least 32 bytes), so that a token
       * cannot be altered or used for another list or caller. Every replica must have the
       * same value. Default: with `storage: database`, a random key generated once and
       * kept in the plugin's database (shared by the replicas on that database); with
       * `storage: kubernetes`, a random key per process, so set this when several
       * replicas serve the portal.
       * @visibility secret
       */
      tokenSecret?: string;
    };
    /**
     * How long a request body may take to arrive, from the end of its headers' processing
     * to its last byte, e.g. `{ seconds: 30 }` or `'30s'`. A slower body is answered 408
     * and its connection closed. Bodies are at most 64 KiB (413, refused on the declared
     * Content-Length before a byte is read). Default 30 seconds.
     */
    requestBodyTimeout?: HumanDuration | string;
    /**
     * How to reach the cluster with `storage: kubernetes` (ignored otherwise). APIProducts
     * and APIKeys are `devportal.kuadrant.io/v1alpha1` custom resources (CRDs in the
     * repository's `deploy/`), API keys live in Secrets, and the read-only kinds are read
     * from the cluster. The client is built when the plugin starts: a missing kubeconfig
     * or an unknown context fails start-up.
     */
    kubernetes?: {
      /**
       * Use the pod's service account (in-cluster config). Cannot be combined with
       * `kubeconfig` or `context`. Default false.
       */
      inCluster?: boolean;
      /**
       * Path of a kubeconfig file (relative paths: the backend's working directory).
       * Default: the client's defaults ($KUBECONFIG, ~/.kube/config, then in-cluster).
       */
      kubeconfig?: string;
      /** The kubeconfig context to use. Default: the kubeconfig's current context. */
      context?: string;
      /**
       * How long one request to the API server may take before the portal answers 503,
       * e.g. `{ seconds: 10 }` or `'10s'`. Default 10 seconds.
       */
      requestTimeout?: HumanDuration | string;
      /**
       * The namespaces the portal serves (allow-list). Lists then go namespace by
       * namespace (RoleBindings suffice), and objects in other namespaces do not exist for
       * the portal; creating in them answers 400. Default: every namespace (cluster-wide
       * lists; needs the ClusterRoleBinding of deploy/rbac.yaml).
       */
      namespaces?: string[];
    };
    /**
     * Where the portal's notifications link to (paths of your frontend; relative ones are
     * resolved against `app.baseUrl` by the notifications UI).
     */
    notifications?: {
      /**
       * One API key request; `{namespace}` and `{name}` are replaced (URL-encoded).
       * Default `/portal/requests/{namespace}/{name}`.
       */
      requestUrlTemplate?: string;
      /** The list of API key requests (a notification about several). Default `/portal/requests`. */
      requestsUrl?: string;
    };
    /**
     * The task that announces expired keys and access requests (contract mcp-access §4.5):
     * it finds Approved keys whose `expiresAt` has passed, claims each once (across replicas),
     * publishes `apikey.expired` and notifies each requester once a run. It enforces nothing:
     * the broker ends an access grant at `expiresAt` on its own.
     */
    keyExpiry?: {
      /**
       * When the task runs (the scheduler's schedule; one replica at a time). Default every
       * minute, at most a minute a run: `{ frequency: { minutes: 1 }, timeout: { minutes: 1 } }`.
       */
      schedule?: SchedulerServiceTaskScheduleDefinitionConfig;
    };
  };
}
