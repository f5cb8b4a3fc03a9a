import { HumanDuration } from '@backstage/types';

export interface Config {
  /** Configuration of the MCP broker backend plugin (`/api/mcp-broker`). */
  mcpBroker?: {
    /**
     * The backend MCP servers (streamable HTTP) that the broker aggregates, in priority order:
     * when two servers expose the same tool name, prompt name or resource URI, the earlier one
     * wins and the clash is reported on `/api/mcp-broker/status`.
     */
    servers?: Array<{
      /** Unique name, `[a-z0-9-]+`; prefixes elicitation ids and, by default, tool names. */
      name: string;
      /** The server's streamable-HTTP endpoint, e.g. `http://127.0.0.1:3101/mcp`. */
      url: string;
      /** Prefix of this server's tool and prompt names; default `<name>_`, `""` allowed. */
      toolPrefix?: string;
      /**
       * Headers the broker sends to this server: its own credentials for it. The client's
       * credentials are never forwarded. `Mcp-Session-Id`, `Mcp-Protocol-Version`, `Accept`,
       * `Content-Type` and `Host` are set by the broker and cannot be configured.
       * @visibility secret
       */
      headers?: { [name: string]: string };
    }>;
    /** How long an elicitation id stays answerable; default 10 minutes. */
    elicitationTtl?: HumanDuration | string;
    /** Longest a tools/call may run; default 5 minutes. */
    toolCallTimeout?: HumanDuration | string;
    /** Reconnect backoff towards backend servers (exponential with jitter, forever). */
    reconnect?: {
      /** First retry delay; default 500 ms. */
      initialDelay?: HumanDuration | string;
      /** Longest retry delay; default 30 s. */
      maxDelay?: HumanDuration | string;
    };
    /** Interval of SSE keep-alive comments on every open stream; default 15 s. */
    keepAlive?: HumanDuration | string;
    /** Re-listing interval for backends that offer no event stream (GET answers 405); default 30 s. */
    pollInterval?: HumanDuration | string;
    /** Timeout of each request the broker sends to a backend (tool calls excepted); default 30 s. */
    requestTimeout?: HumanDuration | string;
    /**
     * Minimum spacing of list_changed notifications of one kind to clients; changes inside the
     * window are sent as one notification at its end. Default 250 ms.
     */
    coalesceWindow?: HumanDuration | string;
    /**
     * A client session without requests and without an open stream ends after this; default 1 hour.
     * With several replicas this is the TTL of the shared session record.
     */
    sessionIdleTimeout?: HumanDuration | string;
    /**
     * Longest time a user's permission decision (`mcp-broker.*` permissions) is used before the
     * permission backend is asked again, so a policy change takes effect within this time.
     * Default and maximum 30 s; a change of the aggregated catalog is decided again at once.
     */
    permissionDecisionMaxAge?: HumanDuration | string;
    /**
     * Where client sessions and elicitation gateway ids are kept. `memory` (default): in this
     * process; right for one backend replica. `database`: in the plugin's database (PostgreSQL in
     * production), so that several replicas behind one address without sticky sessions recognise
     * every session and an elicitation id is claimed once across replicas (docs/deployment.md).
     */
    sessionStore?: 'memory' | 'database';
    /**
     * Bytes that may queue on one client stream before that client is disconnected as too slow
     * (it stops reading); default 1048576 (1 MiB).
     */
    clientStreamBufferBytes?: number;
    /**
     * Largest request body a client may send to `/api/mcp-broker/mcp`, in bytes. A larger
     * declared Content-Length is refused with 413 before a byte is read; a chunked body as
     * soon as it passes the limit. Default 4194304 (4 MiB).
     */
    maxRequestBodyBytes?: number;
    /**
     * How long a request body may take to arrive, e.g. `{ seconds: 30 }` or `'30s'`; a slower
     * body gets 408 (with a JSON-RPC error body) and its connection is closed. Default 30 s.
     */
    requestBodyTimeout?: HumanDuration | string;
    /**
     * Most client sessions at once. At a limit the least recently used idle session (no GET
     * stream, no request running) makes room; when none is idle, `initialize` gets HTTP 429 with
     * a JSON-RPC error (-32000) naming the limit. With `sessionStore: database` a principal at
     * its limit is always refused (a replica cannot see whether another one is using a session),
     * and the replica limit only releases this replica's part of an idle session, which goes on.
     * Each session keeps only `clientInfo.name` and `clientInfo.version` (cut to 256 characters)
     * and the `elicitation`, `sampling` and `roots` capabilities (objects, at most 4096 bytes as
     * JSON; more is refused with -32602).
     */
    sessionLimits?: {
      /** Sessions one principal (user or service) may hold, across all replicas; default 32. */
      perPrincipal?: number;
      /** Sessions one replica serves; default 5000. */
      perReplica?: number;
    };
    /**
     * On shutdown (SIGTERM), how long tool calls in flight may still finish. Meanwhile new
     * requests and GET streams get HTTP 503 (JSON-RPC error -32000, retry elsewhere); at the
     * deadline each remaining call is answered with a JSON-RPC error (-32000, `data.reason`
     * `shutting-down`, `data.retryable` true) and cancelled at its backend, and only then are the
     * streams closed. Default 10 s; keep it below the orchestrator's grace period (Kubernetes
     * `terminationGracePeriodSeconds`, default 30 s).
     */
    shutdownDrainTimeout?: HumanDuration | string;
    /** Host/Origin checks on `/api/mcp-broker/mcp` (DNS rebinding protection). */
    dnsRebindingProtection?: {
      /** Default true. */
      enabled?: boolean;
      /**
       * Host names (without port) accepted in the `Host` header; default `localhost`,
       * `127.0.0.1`, `[::1]` and the host of `backend.baseUrl`.
       */
      allowedHosts?: string[];
      /**
       * Origins (`scheme://host[:port]`) accepted when a browser sends `Origin`; default the
       * origins of `backend.baseUrl` and `app.baseUrl`. Requests without `Origin` pass.
       */
      allowedOrigins?: string[];
    };
    /**
     * Kubernetes discovery (optional): MCP servers registered as `mcp.kuadrant.io/v1alpha1`
     * `MCPServerRegistration` resources (the kind Kuadrant's mcp-gateway uses) are watched and
     * added, changed and removed at runtime like `servers` entries. Each becomes a server named
     * `<namespace>-<name>`; a config entry with the same name wins. The URL comes from the
     * referenced HTTPRoute (`spec.targetRef`: its first hostname, `routes.scheme`/`routes.port`,
     * and `spec.path`, default `/mcp`) or from the annotation `devportal.kuadrant.io/mcp-server-url`;
     * the tool prefix from `spec.toolPrefix` (default `<namespace>-<name>_`); credentials from the
     * Secret in `spec.credentialRef` (key default `token`), sent as `Authorization` (as is when it
     * starts with a scheme such as `Bearer `, else as a bearer token). These settings are read at
     * start-up; the registrations themselves are watched.
     */
    kubernetes?: {
      /** Default true when the section is present. */
      enabled?: boolean;
      /** Use the pod's service account (the broker runs in the cluster). */
      inCluster?: boolean;
      /** Path of a kubeconfig file; default: the usual kubeconfig lookup (`KUBECONFIG`, `~/.kube/config`). */
      kubeconfig?: string;
      /** Context of the kubeconfig to use; default its current context. */
      context?: string;
      /** Namespaces to watch (one watch each); default the whole cluster (one cluster-wide watch). */
      namespaces?: string[];
      /** Only registrations with matching labels, e.g. `mcp-broker=backstage`. */
      labelSelector?: string;
      /** Timeout of each list/get request to the API server; default 10 s. */
      requestTimeout?: HumanDuration | string;
      /** How an HTTPRoute hostname becomes the server URL. */
      routes?: {
        /** Default `http`. */
        scheme?: 'http' | 'https';
        /** Port of the gateway listener; default the scheme's port. */
        port?: number;
      };
      /**
       * How often every registration's HTTPRoute and Secret are read again (they are not
       * watched): picks up rotated credentials and routes created after their registration.
       * Default 5 minutes.
       */
      resyncInterval?: HumanDuration | string;
      /** Backoff between failed list/watch attempts (exponential with jitter, forever). */
      retry?: {
        /** Default 500 ms. */
        initialDelay?: HumanDuration | string;
        /** Default 30 s. */
        maxDelay?: HumanDuration | string;
      };
    };
  };
}
