/*
 * The one error vocabulary of the backend layer: every failure to get an answer from a backend
 * MCP server — over the broker's own connection (lists, prompts/get, resources/read,
 * completion) or a client's tool call — is one BackendError with a `reason`, and reaches the
 * client through one mapping ({@link toClientError}). The channels (LegacyChannel,
 * ModernChannel) raise it, from the transport's failures (backendTransport.ts) or their own
 * findings; BackendConnection shows it on `/status` (`statusText`).
 *
 * Policy (deliberate):
 * - A backend's own JSON-RPC error (BackendRpcError) and its `isError` tool results are the
 *   backend's answer: they pass through unchanged (only the id is the client's).
 * - Everything that prevented the broker from getting an answer — a refused request, a network
 *   error, a broken or truncated stream, an unusable message, the call timeout — becomes a
 *   JSON-RPC error with the client's id, a message that names the backend and says what
 *   happened, and `data: { backend, reason }` for programs. These are not `isError` results
 *   because the tool may never have run (or its outcome is unknown), which is not a tool-level
 *   failure a model could reason about.
 * Codes follow the SDK's `ErrorCode`: -32001 (request timeout), -32000 (connection closed) and
 * -32603 (internal error) for the rest. Messages name the backend, never its credentials.
 */
import { JsonRpcErrorCode, JsonRpcErrorObject } from '../protocol/jsonRpc';
import { isAbortError } from './abortError';
import { BackendTransportError } from './backendTransport';

/** The backend answered a request with a JSON-RPC error; passed to the client as it is. */
export class BackendRpcError extends Error {
  readonly name = 'BackendRpcError';

  constructor(
    readonly backend: string,
    readonly error: JsonRpcErrorObject,
  ) {
    super(`backend ${backend} answered with error ${error.code}: ${error.message}`);
  }
}

/** Why a backend request failed, as reported in the client error's `data.reason`. */
export type BackendFailureReason =
  | 'http-status'
  | 'unreachable'
  | 'not-connected'
  | 'stream-ended'
  | 'connection-lost'
  | 'malformed-response'
  | 'timeout'
  | 'session-lost'
  | 'shutting-down'
  | 'replica-lost'
  | 'task-result'
  | 'too-many-input-rounds';

/** Reasons reported with code `ConnectionClosed`. */
const CONNECTION_CLOSED_REASONS = new Set<BackendFailureReason>([
  'stream-ended',
  'connection-lost',
  'shutting-down',
  'replica-lost',
]);

/** A failure to get an answer from a backend; see the file comment. */
export class BackendError extends Error {
  readonly name = 'BackendError';

  constructor(
    readonly backend: string,
    readonly reason: BackendFailureReason,
    /** What the client is told (a sentence naming the backend). */
    message: string,
    readonly options: {
      /** The transport's status code, shown in `data.httpStatus`. */
      readonly httpStatus?: number;
      /** What `/status` and the logs show after `backend <name>: ` (default: the message). */
      readonly statusDetail?: string;
      /** The transport failure behind it, if it came from one. */
      readonly transport?: BackendTransportError;
    } = {},
  ) {
    super(message);
  }

  /** The transport's status code (e.g. 401), if there is one. */
  get httpStatus(): number | undefined {
    return this.options.httpStatus;
  }

  /** What happened without the backend's name (what `lastError` on `/status` shows). */
  get detail(): string {
    return this.options.statusDetail ?? this.message;
  }

  /** `backend <name>: <detail>`: how `/status` and the logs name the failure. */
  get statusText(): string {
    return `backend ${this.backend}: ${this.detail}`;
  }

  /** True when the backend refused the broker's credentials (the connection is `failed`). */
  get credentialsRejected(): boolean {
    return this.options.transport?.failure === 'credentials';
  }

  /** The JSON-RPC `error` member the client receives. */
  toJsonRpcError(): { code: number; message: string; data: Record<string, unknown> } {
    let code: number = JsonRpcErrorCode.InternalError;
    if (this.reason === 'timeout') code = JsonRpcErrorCode.RequestTimeout;
    else if (CONNECTION_CLOSED_REASONS.has(this.reason)) code = JsonRpcErrorCode.ConnectionClosed;
    const data: Record<string, unknown> = { backend: this.backend, reason: this.reason };
    if (this.httpStatus !== undefined) data.httpStatus = this.httpStatus;
    if (this.reason === 'shutting-down' || this.reason === 'replica-lost') data.retryable = true;
    return { code, message: this.message, data };
  }
}

/**
 * Maps anything thrown while talking to a backend (a transport failure, a socket error, an
 * abort) to a {@link BackendError}. `answering` tells a request that got no answer from one
 * whose answer broke off.
 */
export function backendFailure(backend: string, error: unknown, answering: boolean): BackendError {
  if (error instanceof BackendError) return error;
  if (error instanceof BackendTransportError) return fromTransport(backend, error, answering);
  const detail = describeCause(error);
  if (!answering) {
    return new BackendError(
      backend,
      'unreachable',
      `MCP server "${backend}" is unreachable (${detail})`,
    );
  }
  return new BackendError(
    backend,
    'connection-lost',
    `the connection to MCP server "${backend}" broke during the call (${detail})`,
    { statusDetail: 'closed the response stream before answering' },
  );
}

function fromTransport(
  backend: string,
  error: BackendTransportError,
  answering: boolean,
): BackendError {
  const server = `MCP server "${backend}"`;
  const options = { httpStatus: error.status, statusDetail: error.detail, transport: error };
  switch (error.failure) {
    case 'unreachable':
      return new BackendError(
        backend,
        'unreachable',
        `${server} is unreachable (${error.code ?? error.detail})`,
        options,
      );
    case 'session-lost':
      return new BackendError(
        backend,
        'session-lost',
        `${server} no longer knows the broker's session (HTTP ${error.status ?? 404})`,
        options,
      );
    case 'broken':
      if (!answering) {
        return new BackendError(
          backend,
          'unreachable',
          `${server} is unreachable (${error.detail})`,
          {
            ...options,
            statusDetail: 'closed the response stream before answering',
          },
        );
      }
      return new BackendError(
        backend,
        'connection-lost',
        `the connection to ${server} broke during the call (${error.detail})`,
        { ...options, statusDetail: 'closed the response stream before answering' },
      );
    case 'too-large':
      return new BackendError(
        backend,
        'malformed-response',
        `${server} sent ${error.detail}`,
        options,
      );
    case 'not-mcp':
      return new BackendError(backend, 'malformed-response', `${server} ${error.detail}`, options);
    default:
      // credentials, not-supported, not-found, refused, server-error: the backend said no.
      return new BackendError(backend, 'http-status', `${server} ${error.detail}`, options);
  }
}

/** The call's stream ended without a result. */
export function backendStreamEnded(backend: string): BackendError {
  return new BackendError(
    backend,
    'stream-ended',
    `MCP server "${backend}" ended the call's stream without sending a result`,
    { statusDetail: 'closed the response stream before answering' },
  );
}

/** The backend's answer could not be used (`what` it sent instead). */
export function backendMalformedResponse(
  backend: string,
  what: string,
  statusDetail?: string,
): BackendError {
  return new BackendError(backend, 'malformed-response', `MCP server "${backend}" sent ${what}`, {
    statusDetail,
  });
}

/** A request went out while the broker's connection to the backend was down. */
export function backendNotConnected(backend: string, state: string): BackendError {
  return new BackendError(
    backend,
    'not-connected',
    `MCP server "${backend}" is not connected (${state})`,
    { statusDetail: `not connected (${state})` },
  );
}

/** A request over the broker's own connection exceeded its time limit. */
export function backendRequestTimedOut(backend: string, what: string): BackendError {
  return new BackendError(backend, 'timeout', `MCP server "${backend}": ${what}`, {
    statusDetail: what,
  });
}

/**
 * A 2026-07-28 backend answered a call with a task although the broker did not declare the tasks
 * extension on it (the client did not ask for one, tasks are off, or the person's bound is reached).
 */
export function backendReturnedTask(backend: string): BackendError {
  return new BackendError(
    backend,
    'task-result',
    `MCP server "${backend}" returned a task to a call that did not declare the tasks extension; call the tool with the extension declared (2026-07-28) or params.task (2025-11-25)`,
  );
}

/** A 2026-07-28 backend kept answering `input_required` past the broker's round limit. */
export function backendTooManyInputRounds(backend: string, rounds: number): BackendError {
  return new BackendError(
    backend,
    'too-many-input-rounds',
    `MCP server "${backend}" still asked for input after ${rounds} rounds; the call was ended`,
  );
}

/** The call exceeded `mcpBroker.toolCallTimeout`. */
export function backendTimeout(backend: string, timeoutMs: number): BackendError {
  return new BackendError(
    backend,
    'timeout',
    `the call to MCP server "${backend}" exceeded the broker's tool call timeout of ${formatMs(timeoutMs)} (mcpBroker.toolCallTimeout)`,
  );
}

/** The backend was removed from the configuration while the call ran. */
export function backendRemoved(backend: string): BackendError {
  return new BackendError(
    backend,
    'connection-lost',
    `MCP server "${backend}" was removed from the broker during the call`,
  );
}

/**
 * The broker shut down (its drain deadline, `mcpBroker.shutdownDrainTimeout`, passed) before the
 * call finished: the client may send the call again, to another replica or after the restart.
 */
export function brokerShuttingDown(backend: string): BackendError {
  return new BackendError(
    backend,
    'shutting-down',
    `the MCP broker is shutting down and stopped the call to MCP server "${backend}" ` +
      'before it finished; the call may be retried',
  );
}

/**
 * The broker replica that ran the call (held its backend stream) stopped before the call ended
 * (issue #41): the result is lost with it, and the client may send the call again.
 */
export function brokerReplicaLost(backend: string): BackendError {
  return new BackendError(
    backend,
    'replica-lost',
    `the MCP broker replica that ran the call to MCP server "${backend}" stopped before the ` +
      'call ended, and its result is lost; the call may be retried',
  );
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function describeCause(error: unknown): string {
  // The socket error's code (ECONNREFUSED, ECONNRESET, …) is what helps; fetch wraps it in `cause`.
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code !== 'ABORT_ERR') return code;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Maps an error from any backend request to the JSON-RPC error a client receives. */
export function toClientError(error: unknown): JsonRpcErrorObject {
  if (error instanceof BackendRpcError) return error.error;
  if (error instanceof BackendError) return error.toJsonRpcError();
  if (error instanceof Error && isAbortError(error)) {
    return { code: JsonRpcErrorCode.InternalError, message: 'request aborted' };
  }
  return { code: JsonRpcErrorCode.InternalError, message: 'internal error in the broker' };
}

/** How `/status` and the logs name any failure of a connection attempt. */
export function describeFailure(error: unknown): string {
  if (error instanceof BackendError) return error.statusText;
  if (error instanceof Error) return error.message;
  return String(error);
}
