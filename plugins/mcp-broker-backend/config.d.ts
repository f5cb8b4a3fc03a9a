import { HumanDuration } from '@backstage/types';

export interface Config {
  /** Configuration of the MCP broker backend plugin. */
  mcpBroker?: {
    /** The backend MCP servers (streamable HTTP) that the broker aggregates. */
    servers?: Array<{
      /** Unique name, `[a-z0-9-]+`; prefixes elicitation ids and, by default, tool names. */
      name: string;
      /** The server's streamable-HTTP endpoint, e.g. `http://127.0.0.1:3101/mcp`. */
      url: string;
      /** Prefix of this server's tool and prompt names; default `<name>_`, `""` allowed. */
      toolPrefix?: string;
      /**
       * Headers the broker sends to this server: its own credentials for it.
       * @visibility secret
       */
      headers?: { [name: string]: string };
    }>;
    /** How long an elicitation id stays answerable; default 10 minutes. */
    elicitationTtl?: HumanDuration | string;
    /** Longest a tools/call may run; default 5 minutes. */
    toolCallTimeout?: HumanDuration | string;
    /** Reconnect backoff towards backend servers. */
    reconnect?: {
      /** First retry delay; default 500 ms. */
      initialDelay?: HumanDuration | string;
      /** Longest retry delay; default 30 s. */
      maxDelay?: HumanDuration | string;
    };
    /** Interval of SSE keep-alive comments on every open stream; default 15 s. */
    keepAlive?: HumanDuration | string;
  };
}
