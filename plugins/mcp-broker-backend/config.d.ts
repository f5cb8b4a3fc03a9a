import { SchedulerServiceTaskScheduleDefinitionConfig } from '@backstage/backend-plugin-api';
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
      /**
       * The server's streamable-HTTP endpoint, e.g. `http://127.0.0.1:3101/mcp`. User info in it
       * (`https://user:secret@host/mcp`) is the broker's own credential (sent as Basic
       * authorization) and is left out of a person's requests (see `auth`).
       */
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
      /**
       * Names of `headers` that are not credentials (e.g. `X-Tenant`): in a person's mode (any
       * `auth.mode` but `broker`) the only static headers a person's request carries. Each must
       * be one of `headers`; `Authorization`, `Proxy-Authorization` and `Cookie` cannot be
       * named. Default none.
       */
      nonCredentialHeaders?: string[];
      /**
       * How this server's tool definitions are pinned (spec §13): `off`, `warn` (log and audit a
       * changed tool, serve it) or `enforce` (withhold a changed tool until someone holding
       * `mcp-broker.tool.approve` approves it). Default: `toolPinning.mode`. Kubernetes
       * registrations cannot set it: they get `toolPinning.mode`.
       */
      pinning?: 'off' | 'warn' | 'enforce';
      /**
       * The team (or person) that owns this server, as an entity ref such as
       * `group:default/payments-team` (the kind defaults to `group`, the namespace to
       * `default`). The catalog module makes it the owner of the server's `API` entity, and
       * `GET /servers` shows it. An invalid ref fails start-up. Default: none (the catalog
       * module's `defaultOwner`).
       */
      owner?: string;
      /**
       * Which credential the broker presents on a person's behalf for this server's
       * `tools/call`, `prompts/get`, `resources/read` and `completion/complete`. The event
       * connection and the shared lists always use `headers` (the broker's own credentials).
       * A person's requests carry the person's credential and only the `headers` named in
       * `nonCredentialHeaders` — no other static header, and not the URL's user info. The
       * client's own token never reaches a server, in any mode.
       */
      auth?:
        | {
            /** The default: `headers` for everyone. */
            mode: 'broker';
          }
        | {
            /**
             * A Backstage plugin that serves MCP (such as `mcp-actions`): a Backstage token on behalf
             * of the calling user for `targetPluginId`, so the plugin applies that person's
             * permissions. A service principal calls as a service (Backstage's rule).
             */
            mode: 'backstage';
            /** The plugin id of the MCP server, e.g. `mcp-actions`. */
            targetPluginId: string;
          }
        | {
            /**
             * OAuth 2.0 Token Exchange (RFC 8693) at `tokenEndpoint`: the broker authenticates as
             * its own client and presents a subject token it signs for the calling user (a JWT:
             * `iss` the broker's base URL, `sub` the user entity ref; keys at
             * `/api/mcp-broker/.well-known/jwks.json`); the access token it gets is cached per
             * person until 30 s before `expires_in`. Users only.
             */
            mode: 'tokenExchange';
            /** The authorization server's token endpoint. */
            tokenEndpoint: string;
            /** The broker's client id there. */
            clientId: string;
            /**
             * The broker's client secret there.
             * @visibility secret
             */
            clientSecret: string;
            /** How the broker authenticates; default `client_secret_basic`. */
            clientAuthentication?: 'client_secret_basic' | 'client_secret_post';
            /** RFC 8693 `audience`: the server's name at the authorization server. */
            audience?: string;
            /** RFC 8693 `resource`: the server's URL, for authorization servers that use it. */
            resource?: string;
            /** Space-separated scopes to ask for. */
            scope?: string;
            /** `aud` of the broker's subject token; default the token endpoint URL. */
            subjectTokenAudience?: string;
          }
        | {
            /**
             * A personal credential (API key, personal access token) each person stores once at
             * the broker's page (`/api/mcp-broker/connect/<server>`), where the MCP URL-mode
             * elicitation of a call without one sends them. Needs `credentialEncryptionKey`.
             */
            mode: 'userCredential';
            /** The header that carries it; default `Authorization`. */
            header?: string;
            /** Text before the value; default `Bearer ` for `Authorization`, else none. */
            prefix?: string;
            /** What to store, shown on the page (e.g. where to create the token, which scopes). */
            description?: string;
          };
    }>;
    /**
     * AES-256-GCM key that encrypts what the broker keeps secret in its database: stored personal
     * credentials (`auth.mode: userCredential`) and the broker's own keys (the subject-token
     * signing keys and the requestState HMAC keys). 32 random bytes in base64
     * (`openssl rand -base64 32`), the same on every replica. Required when a configured server
     * or credential profile uses `userCredential`, and with `sessionStore: database` (the replicas share the broker's
     * keys through the database); without it a single replica keeps its keys in memory. A key
     * that does not open what is stored fails start-up.
     * @visibility secret
     */
    credentialEncryptionKey?: string;
    /**
     * Earlier values of `credentialEncryptionKey`, still accepted for reading. To rotate without
     * downtime (docs/deployment.md): list the new key here on every replica; then make it
     * `credentialEncryptionKey` and list the old one here (everything is re-encrypted with the new
     * key); then remove the old one.
     * @visibility secret
     */
    previousCredentialEncryptionKeys?: string[];
    /**
     * Access grants from modules such as the portal's (docs/contracts/mcp-access.md §5): what
     * the rule HAS_ACCESS_GRANT reads. Used only when a module adds a grant source.
     */
    accessGrants?: {
      /**
       * The full sync, which reads every live grant of each source and repairs the feed (events
       * bring single changes in between; one replica at a time runs it). Default: every 60
       * seconds, at most 30 seconds a run, first run at start-up.
       */
      fullSync?: SchedulerServiceTaskScheduleDefinitionConfig;
      /**
       * How often each replica reads the grant feed on its own. On PostgreSQL a replica reads it
       * as soon as another one writes (`LISTEN/NOTIFY` on its one listening connection, see
       * `signalNotifications`), and this poll is only the fallback for a lost notification or a
       * listening connection that is reconnecting; on SQLite (one process) the writer applies its
       * own change at once and the poll only proves freshness. Default 5 seconds; at least
       * 100 ms.
       */
      pollInterval?: HumanDuration | string;
      /**
       * The age of the last successful read of the feed after which this replica applies no
       * grant at all (it cannot know about revocations: it fails closed) until a read succeeds.
       * At least twice `pollInterval`. Default 15 seconds, or three poll intervals when that is
       * longer.
       */
      staleAfter?: HumanDuration | string;
    };
    /**
     * Usage people can see (docs/contracts/mcp-access.md §7): each replica counts tool calls per
     * UTC day, person, server and tool in memory and adds them to the table
     * `mcp_broker_usage_daily` on this interval (and at shutdown). Usage is exact up to one flush
     * interval per replica, apart from a crash.
     */
    usage?: {
      /** How often each replica writes its counts. Default 30 seconds; at least 1 second. */
      flushInterval?: HumanDuration | string;
      /** How long daily rows are kept: whole days from 1 to 400. Default `{ days: 90 }`. */
      retention?: HumanDuration | string;
    };
    /**
     * Curated endpoints (spec §13): named, narrower views of the broker, each served at
     * `/api/mcp-broker/endpoints/<name>/mcp` in both protocol eras. What a person sees through one
     * is what their permissions allow, narrowed to the endpoint (it never widens). The key is the
     * endpoint's name: `[a-z0-9-]+`, at most 63 characters. An invalid entry fails start-up with a
     * message naming the key. Endpoints follow config reloads: added, changed (their clients get
     * `list_changed`) and removed (their streams and sessions end once calls in flight finish);
     * a reload with an invalid entry is refused and the running endpoints stay.
     */
    endpoints?: {
      [name: string]: {
        /** `serverInfo.title` through the endpoint; default its name. */
        title?: string;
        /** The `instructions` of `initialize` and `server/discover`; at most 4,000 characters. */
        instructions?: string;
        /**
         * Names of the broker servers whose tools, prompts and resources the endpoint may show
         * (at least one). A name no server has yet is allowed and listed on `/status` as
         * `missingServers`.
         */
        servers: string[];
        /** Which of their tools, by the prefixed names clients see. */
        tools?: {
          /**
           * Globs (`*` matches any run of characters, `?` exactly one, case-sensitive): a tool
           * must match one. Default: all.
           */
          include?: string[];
          /** Globs: a tool matching one is left out, whatever `include` says. */
          exclude?: string[];
        };
        /**
         * A tool passes when each named hint — its declared value, or MCP's default when it
         * declares none (readOnlyHint false, destructiveHint true, idempotentHint false,
         * openWorldHint true) — equals the value given, e.g. `readOnlyHint: true`.
         */
        annotations?: {
          readOnlyHint?: boolean;
          destructiveHint?: boolean;
          idempotentHint?: boolean;
          openWorldHint?: boolean;
        };
        /**
         * Per prefixed tool name: the title and/or description clients see through this endpoint
         * instead of the backend's (what is pinned and called is unchanged).
         */
        overrides?: {
          [tool: string]: { title?: string; description?: string };
        };
      };
    };
    /** Pinned tool definitions (spec §13): a backend's changed tool is noticed, and held where asked. */
    toolPinning?: {
      /**
       * The pinning mode of every server that names none (registrations included): `off`,
       * `warn` or `enforce`. Default `warn`.
       */
      mode?: 'off' | 'warn' | 'enforce';
      /**
       * How often a replica re-reads the pins of servers with a held change, so an approval on
       * another replica takes effect here; default 1 second (at least 100 ms).
       */
      refreshInterval?: HumanDuration | string;
      /**
       * Entity refs (users or groups) sent a Backstage notification when a changed tool is held
       * for approval. Backstage cannot list who holds a permission, so the approvers are named
       * here. Default none (the change is still logged and audited).
       */
      notify?: string[];
    };
    /**
     * Rotation of the broker's own keys (spec §11.1), shared by every replica through the
     * database: a new key is published ahead of its use, signs from then on, and old keys keep
     * verifying until everything they signed has expired, then are removed.
     */
    keyRotation?: {
      /** Age at which a new subject-token signing key is made (token exchange); default 30 days. */
      signingKeyMaxAge?: HumanDuration | string;
      /** Age at which a new requestState HMAC key is made; default 30 days. */
      requestStateKeyMaxAge?: HumanDuration | string;
      /**
       * How often every replica re-reads the keys (and the first to notice a due rotation makes
       * the new key); default 1 minute. A new signing key is published this twice plus the JWKS
       * cache time (5 minutes) before it signs.
       */
      checkInterval?: HumanDuration | string;
      /**
       * Clock difference allowed between the broker and whoever verifies its tokens: an old key
       * stays this much longer than what it signed lives; default 1 minute.
       */
      clockSkew?: HumanDuration | string;
    };
    /** Who may change stored personal credentials (spec §11.1). */
    credentials?: {
      /**
       * Let service principals (static or JWKS service tokens) store and delete their own
       * personal credentials with their token (`PUT`/`DELETE /credentials/<server>`). Default
       * false. People's writes always need their own browser (Backstage's cookie and the
       * backend's or the app's `Origin`); a user's bearer token never writes, whatever this says.
       */
      allowServiceWrites?: boolean;
      /**
       * The path of the portal frontend's "My connections" page in the Backstage app (e.g.
       * `/connections`, where `@devportal/plugin-portal` mounts it by default). When set (and
       * `app.baseUrl` is), a URL-mode elicitation sends people to
       * `<app.baseUrl><appPagePath>/<server>?elicitationId=…`, and refusals name that page; when
       * not set, the broker's own page `/api/mcp-broker/connect/<server>`. Default: not set.
       */
      appPagePath?: string;
    };
    /**
     * How long an elicitation id stays answerable, and how long a 2026-07-28 client's
     * `requestState` is good (its held call is cancelled at the backend after it); default 10
     * minutes.
     */
    elicitationTtl?: HumanDuration | string;
    /**
     * HMAC-SHA256 key (at least 32 bytes, e.g. `openssl rand -base64 32`) of the `requestState`
     * the broker gives 2026-07-28 clients with an `input_required` result. Every replica must use
     * the same key. When absent, the broker's rotating requestState keys are used
     * (`keyRotation`): with `credentialEncryptionKey` kept encrypted in the plugin's database and
     * shared; without it each process makes its own (a state is then good only on the replica
     * that issued it, which also holds the call it resumes). A configured secret does not rotate.
     * @visibility secret
     */
    requestStateSecret?: string;
    /**
     * `ttlMs` (how long a client may cache the answer) of `tools/list`, `prompts/list`,
     * `resources/list`, `resources/templates/list` and `server/discover` for 2026-07-28 clients,
     * used when no backend states a smaller non-zero one; `0` means "stale at once". Default
     * 30 seconds (as long as a permission decision is reused; list changes come over
     * `subscriptions/listen`).
     */
    listTtl?: HumanDuration | string;
    /**
     * Bounds of what the broker accepts from one backend server, so that a server that lists
     * too much cannot exhaust the broker's memory or time (its other servers are unaffected).
     */
    backendLimits?: {
      /**
       * Most items kept of each list (tools, resources, resource templates, prompts) of one
       * server: the first ones in the server's own order (page after page). A longer list is
       * cut, logged once and shown on `/status` (`truncatedLists`). Default 1000.
       */
      maxListItems?: number;
      /**
       * Most pages requested when reading one list of one server (a cursor that never ends
       * stops here; the items of those pages are served, and `/status` says so). Default 50.
       */
      maxListPages?: number;
    };
    /** Longest a tools/call may run; default 5 minutes. */
    toolCallTimeout?: HumanDuration | string;
    /** Reconnect backoff towards backend servers (exponential with jitter, forever). */
    reconnect?: {
      /** First retry delay; default 500 ms. */
      initialDelay?: HumanDuration | string;
      /**
       * Longest retry delay; default 30 s. Also how long a backend's event connection must stay
       * up to count as healthy and start the backoff over (at most 10 s).
       */
      maxDelay?: HumanDuration | string;
    };
    /** Interval of SSE keep-alive comments on every open stream; default 15 s. */
    keepAlive?: HumanDuration | string;
    /** Re-listing interval for backends that offer no event stream (GET answers 405); default 30 s. */
    pollInterval?: HumanDuration | string;
    /** Timeout of each request the broker sends to a backend (tool calls excepted); default 30 s. */
    requestTimeout?: HumanDuration | string;
    /**
     * Longest wait for a backend's event connection to open: the response headers of its GET
     * stream (2025-11-25), the acknowledgement of its `subscriptions/listen` (2026-07-28).
     * Default 5 s, capped by `requestTimeout`. A stream that misses it fails the connection
     * attempt: `/status` shows `backing-off`, `eventStream: down` and a `lastError` naming the
     * deadline, and the broker reconnects with the `reconnect` backoff.
     */
    eventStreamOpenTimeout?: HumanDuration | string;
    /**
     * Minimum spacing of list_changed notifications of one kind to clients; changes inside the
     * window are sent as one notification at its end. Also the shortest time between two
     * re-lists of one server that its own `list_changed` events ask for (a flooding server is
     * re-listed at most once per window). Default 250 ms.
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
     * On PostgreSQL: whether the replicas wake each other with `LISTEN/NOTIFY` when they signal
     * a call (with `sessionStore: database`: a cancellation, an answer, a relayed round) or
     * write an access grant (`accessGrants`), so it takes effect at once; each replica then
     * holds one more connection to the database, shared by both (docs/deployment.md). `false`:
     * they only poll (for signals every 100–250 ms while something waits, for grants every
     * `accessGrants.pollInterval`), e.g. behind a connection pooler in transaction mode, which
     * cannot `LISTEN`. Default true; SQLite always polls.
     */
    signalNotifications?: boolean;
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
      /**
       * Sessions one principal (user or service) may hold, across all replicas; default 32.
       * Also the number of 2026-07-28 `subscriptions/listen` streams a principal may hold on one
       * replica (counted apart from sessions; more → HTTP 429, JSON-RPC -32000).
       */
      perPrincipal?: number;
      /** Sessions one replica serves; default 5000. Also its most listen streams at once. */
      perReplica?: number;
    };
    /**
     * Long-running tasks relayed through the broker (docs/contracts/tasks-and-apps.md §2, §5): a
     * person's task outlives the client's connection and session, is reachable through any
     * replica (with `sessionStore: database`) and is kept under a broker task id bound to that
     * person.
     */
    tasks?: {
      /**
       * Relay tasks (default true). false: the tasks capability and extension are removed from
       * what is relayed and `tasks/*` methods are not found.
       */
      enabled?: boolean;
      /**
       * Open tasks (pending, working, input_required) one person may have, across all replicas;
       * default 64. A task-augmented call beyond it is refused with HTTP 429, JSON-RPC -32000.
       * At most 4 × this many tasks are kept per person (the oldest finished ones are forgotten).
       */
      perPerson?: number;
      /** Cap on a task's lifetime at the broker (the backend's ttl, at most this); default 24 h. */
      maxTtl?: HumanDuration | string;
      /** Floor of the broker's own polling of a backend's task; default 1 s. */
      minPollInterval?: HumanDuration | string;
      /** Largest result the broker holds for a task it made itself, in bytes; default 1 MiB. */
      maxStoredResultBytes?: number;
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
    /**
     * Per-person limits of the requests that reach a server on a person's behalf (`tools/call`,
     * `prompts/get`, `resources/read`, `completion/complete`; both protocol eras; see `methods`).
     * A request over a limit is refused before it reaches its server, with HTTP 429,
     * `Retry-After` and a JSON-RPC error -32000 whose `data` is `{ reason: "rate-limited",
     * retryAfterMs }`; the refusal is audited (`mcp-broker.tool-call`, or `mcp-broker.request`
     * for the other methods, outcome `rate-limited`) and counted
     * (`mcp_broker.rate_limit.refusals`). When an entry names a group and the person's groups
     * cannot be read from Backstage, their requests are refused (fail closed) with HTTP 503,
     * `Retry-After` and `data: { reason: "limits-unavailable", retryable: true, retryAfterMs }`.
     *
     * Windows are fixed (`per` long, aligned to the clock), so up to twice a limit can pass across
     * the boundary of two windows. With `sessionStore: database` the replicas share each count
     * through the database in leases (no database round trip per call): together they never
     * admit more than the limit, and a person is refused no earlier than after 90 % of it; a
     * replica that cannot reach the database admits at most its share (the limit divided by the
     * live replicas) meanwhile. With `sessionStore: memory` the count is this process's.
     */
    rateLimits?: {
      /**
       * The MCP methods counted: some of `tools/call`, `prompts/get`, `resources/read`,
       * `completion/complete` (the methods that reach a server on a person's behalf; another
       * name fails start-up). Default all four. An entry with a `tool` glob counts tool calls
       * only; every other entry counts all these methods together.
       */
      methods?: string[];
      /** Every person's limit over all their requests together; default none. */
      default?: {
        /** Requests allowed per window (a positive integer). */
        calls: number;
        /** The window, e.g. `{ minutes: 1 }` or `'1m'`; at least one second. */
        per: HumanDuration | string;
      };
      /**
       * Limits for a server, a tool glob, a user or a group. Entries with the same `server` and
       * `tool` are alternatives: a person gets the one naming them as `user`, else the first one
       * naming one of their groups, else the one naming neither, else none. Entries with
       * different `server`/`tool` (and `default`) all hold at once, each counted apart: a call
       * is refused when any of its budgets is spent.
       */
      overrides?: Array<{
        /** The configured server (`servers[].name`) whose requests this counts; default all. */
        server?: string;
        /**
         * Glob of the server's own (unprefixed) tool name; `*` matches any run of characters,
         * nothing else is special, case-sensitive (as the HAS_NAME permission rule). Default all.
         */
        tool?: string;
        /**
         * The person this entry is for: a user entity ref (`user:default/alice`, or `alice`), or
         * `service:<subject>` for a static-token service. Default everyone.
         */
        user?: string;
        /** A group (entity ref, e.g. `group:default/bots`) whose members this entry is for. */
        group?: string;
        /** Requests (tool calls, with `tool`) allowed per window. */
        calls?: number;
        /** The window; at least one second. */
        per?: HumanDuration | string;
        /** No limit in this scope for this person (instead of `calls` and `per`). */
        unlimited?: boolean;
      }>;
    };
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
     * MCP authorization: clients sign in through Backstage's auth backend (OAuth 2.1; enable
     * `auth.clientIdMetadataDocuments` there). The broker serves the discovery documents they
     * look for and names its protected resource metadata in every 401 of `/mcp`.
     */
    authorization?: {
      /**
       * Serve the discovery documents at the origin root (default true):
       * `/.well-known/oauth-protected-resource/api/mcp-broker/mcp`, and for Backstage's issuer
       * `/.well-known/oauth-authorization-server/api/auth` and
       * `/.well-known/openid-configuration/api/auth`. Set false when another plugin serves OAuth
       * discovery at the origin root (Backstage's mcp-actions plugin with its OAuth on takes
       * `/.well-known/oauth-protected-resource`, and Backstage's root router refuses overlapping
       * paths); the 401 challenge then names
       * `/api/mcp-broker/.well-known/oauth-protected-resource/mcp`, always served.
       */
      rootWellKnownRoutes?: boolean;
    };
    /**
     * Credential profiles (spec §11.1): the credential modes an admin offers to Kubernetes
     * registrations, by name. A registration (written by a namespace's owners) may only name a
     * profile; the profile decides the mode and all its settings, which namespaces may use it
     * and, optionally, which server URLs. Config-file `servers` keep `auth` of their own.
     * Re-read with `servers` when the config changes (every registration is decided again).
     */
    credentialProfiles?: {
      [name: string]: {
        /** Namespaces whose registrations may use this profile (required, at least one). */
        namespaces: string[];
        /**
         * Server URLs a registration using this profile may have, as patterns: `*` is one host
         * label or one path segment, `**` any path, e.g. `https://*.tools.example.com/mcp`. For
         * `backstage` mode without `urls`, only the target plugin's own URL (Backstage's
         * discovery service) is allowed; with `urls`, only these.
         */
        urls?: string[];
        /** The mode, as `servers[].auth.mode`; `broker` needs no profile. */
        mode: 'backstage' | 'tokenExchange' | 'userCredential';
        /** `backstage`: the plugin id of the MCP server, e.g. `mcp-actions`. */
        targetPluginId?: string;
        /** `tokenExchange`: the authorization server's token endpoint. */
        tokenEndpoint?: string;
        /** `tokenExchange`: the broker's client id there. */
        clientId?: string;
        /**
         * `tokenExchange`: the broker's client secret there (or `clientSecretRef`).
         * @visibility secret
         */
        clientSecret?: string;
        /**
         * `tokenExchange`: a Kubernetes Secret with the client secret, read when a registration
         * is resolved (the broker must be allowed to get it).
         */
        clientSecretRef?: {
          namespace: string;
          name: string;
          /** Default `clientSecret`. */
          key?: string;
        };
        /** `tokenExchange`: default `client_secret_basic`. */
        clientAuthentication?: 'client_secret_basic' | 'client_secret_post';
        /** `tokenExchange`: RFC 8693 `audience`. */
        audience?: string;
        /** `tokenExchange`: RFC 8693 `resource`. */
        resource?: string;
        /** `tokenExchange`: space-separated scopes. */
        scope?: string;
        /** `tokenExchange`: `aud` of the broker's subject token; default the token endpoint. */
        subjectTokenAudience?: string;
        /** `userCredential`: the header that carries it; default `Authorization`. */
        header?: string;
        /** `userCredential`: text before the value; default `Bearer ` for `Authorization`. */
        prefix?: string;
        /** `userCredential`: what to store, shown on the broker's page. */
        description?: string;
      };
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
     * starts with a scheme such as `Bearer `, else as a bearer token). A registration cannot
     * choose a person's credential itself: it may name one of `credentialProfiles`
     * (`spec.credentialProfile` or the annotation `devportal.kuadrant.io/credential-profile`);
     * one with `spec.auth`, an unknown profile, a profile its namespace may not use or a URL
     * the profile does not allow is refused (log, `/status`, its `Accepted` condition). These
     * settings are read at start-up; the registrations themselves are watched.
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
