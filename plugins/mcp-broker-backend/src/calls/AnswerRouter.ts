/*
 * The one answer router of the call machinery: every question a backend puts to a 2025-11-25
 * client during a call goes out under a gateway id here, and every answer comes back through
 * here to whoever asked.
 *
 * - A 2025-era backend's server-to-client request (elicitation, sampling, roots) reaches the
 *   client on the call's stream under a fresh gateway id (ElicitationIdMap: `<server>:<random>`,
 *   bound to the client session, single use, expiring with `elicitationTtl`). The client's
 *   answer is posted to the backend session that asked, with the backend's own id as its exact
 *   JSON token (LegacyChannel.respond — the one "answer a backend" there is); an id that expires
 *   unanswered is answered for the client with an error, so the tool goes on.
 * - A 2026-07-28 backend's `input_required` during a 2025 client's call is asked the same way,
 *   one gateway id per input; the answers go to the call waiting for them — on this replica or
 *   another (StatelessInputAnswers).
 * - An answer to a server that acts with each person's identity (spec §11) goes with that
 *   person's credential: the endpoint of their backend session when it is open on this replica,
 *   else the headers the answering request obtains for them (`personalHeaders`, the credential
 *   step's) — and when none can be had the answer fails (`credential-failed`, 403), never going
 *   with the server's static (broker) headers; the id stays answerable.
 * - Unknown, used, expired or foreign ids reach nobody (outcome `unknown-id`, HTTP 404); a
 *   backend that cannot take an answer is `backend-failed` (502).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { LegacySessionRef } from '../backend/LegacyChannel';
import type { BackendChannels } from '../backend/backendChannels';
import { backendFailure, toClientError } from '../backend/backendErrors';
import { personalEndpointOf } from '../backend/backendTransport';
import {
  PERSONAL_CREDENTIAL_ERROR_CODE,
  PersonalCredentialError,
} from '../identity/credentialErrors';
import { isPlainObject, JsonRpcErrorCode } from '../protocol/jsonRpc';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';
import { MODERN_PROTOCOL_VERSION } from '../protocol/versions';
import type { ClientResponseContext, ClientResponseOutcome } from '../types';
import type { AskingCall, BackendResponder, ClientAnswer } from './callTypes';
import type { ElicitationIdMap, ElicitationMapping } from './ElicitationIdMap';
import type { StatelessInputAnswers } from './StatelessInputAnswers';
import type { ToolCall } from './ToolCall';

/** JSON-RPC error code sent to a backend whose request the client did not answer in time. */
export const ELICITATION_EXPIRED_ERROR_CODE = JsonRpcErrorCode.ElicitationExpired;

/** JSON-RPC error code of an answer the broker cannot route (unknown/used/expired/foreign id). */
export const UNKNOWN_ANSWER_ERROR_CODE = JsonRpcErrorCode.InvalidRequest;

/** A 2025 client answered a 2026-07-28 backend's input request with an error. */
export class ClientAnsweredError extends Error {
  constructor(readonly error: unknown) {
    super('the client answered an input request with an error');
  }
}

/** Options of {@link AnswerRouter}. */
export interface AnswerRouterOptions {
  logger: LoggerService;
  elicitations: ElicitationIdMap;
  /** Answers of 2025 clients to 2026-07-28 backends' inputs, from this or another replica. */
  statelessInputs: StatelessInputAnswers;
  /** Finds a live backend by name (answers go to backends, possibly after a config change). */
  backendOf: (backend: string) => BackendChannels | undefined;
  /** Time limit of the broker's short requests to backends (answers). */
  requestTimeoutMs: number;
}

/** See the file comment. */
export class AnswerRouter implements BackendResponder {
  constructor(private readonly options: AnswerRouterOptions) {}

  /** {@inheritDoc BackendResponder.backendOf} */
  backendOf(name: string): BackendChannels | undefined {
    return this.options.backendOf(name);
  }

  /** {@inheritDoc BackendResponder.respond} */
  async respond(
    session: LegacySessionRef,
    rawId: RawJsonRpcId,
    answer: { result?: unknown; error?: unknown },
  ): Promise<void> {
    await this.post(session, rawId, answer).catch(error =>
      this.options.logger.info(
        `Could not answer a request of MCP server "${session.channel.backend}": ${error}`,
      ),
    );
  }

  /**
   * A 2025-era backend's server-to-client request during a session's call (or a task's
   * `tasks/result` stream): the client gets it on that stream under a gateway id (retired when
   * the call ends, or answered with an error for the client at its expiry).
   */
  async relayRequest(
    call: AskingCall,
    session: LegacySessionRef,
    rawId: RawJsonRpcId,
    message: Record<string, unknown>,
  ): Promise<void> {
    call.registeredIds = true;
    const mapping = await this.options.elicitations.register({
      backendRequestId: rawId,
      backend: call.backend,
      backendSessionId: session.session.id,
      protocolVersion: session.session.protocolVersion,
      clientSessionId: call.owner,
      callId: call.id,
    });
    const { id: _backendId, ...rest } = message;
    call.sink.send({ jsonrpc: '2.0', id: mapping.gatewayId, ...rest });
    const expiry = setTimeout(
      () => void this.expireUnanswered(mapping.gatewayId),
      Math.max(0, mapping.expiresAt - Date.now()),
    );
    expiry.unref();
    call.addExpiry(expiry);
  }

  /**
   * Asks a 2025 client each input of a 2026-07-28 backend's `input_required` as a real request
   * on the call's stream (gateway ids, as for a 2025 backend's requests); resolves with the
   * answers under the backend's keys, given on this replica or another. A client's error answer
   * rejects with {@link ClientAnsweredError}; the call ending rejects with its signal's reason.
   */
  async askInputs(
    call: ToolCall,
    round: number,
    inputRequests: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const asked = Object.entries(inputRequests).filter(
      (pair): pair is [string, Record<string, unknown>] =>
        isPlainObject(pair[1]) && typeof pair[1].method === 'string',
    );
    call.registeredIds = true;
    const mappings = await Promise.all(
      asked.map(([key]) =>
        this.options.elicitations.register({
          backendRequestId: JSON.stringify(key),
          backend: call.backend,
          backendSessionId: undefined,
          protocolVersion: MODERN_PROTOCOL_VERSION,
          clientSessionId: call.owner,
          callId: call.id,
        }),
      ),
    );
    const answers = await this.options.statelessInputs.open(call.id, round, mappings);
    try {
      const answered = asked.map(async ([key, request], i) => {
        const gatewayId = mappings[i].gatewayId;
        call.sink.send({
          jsonrpc: '2.0',
          id: gatewayId,
          method: request.method,
          ...(request.params === undefined ? {} : { params: request.params }),
        });
        const answer = await untilAborted(answers.answerTo(gatewayId), call.signal);
        if (answer.error !== undefined) throw new ClientAnsweredError(answer.error);
        return [key, answer.result ?? {}] as const;
      });
      return Object.fromEntries(await Promise.all(answered));
    } finally {
      answers.close();
    }
  }

  /**
   * Routes a client's JSON-RPC response (to an elicitation or sampling request) to the backend
   * that asked, with the backend's original id. Unknown, used, expired or foreign ids reach nobody.
   */
  async answer(
    clientSessionId: string,
    answer: ClientAnswer,
    personalHeaders?: ClientResponseContext['personalHeaders'],
  ): Promise<ClientResponseOutcome> {
    const { elicitations, statelessInputs } = this.options;
    const mapping = await elicitations.claim(answer.id, clientSessionId);
    if (!mapping) {
      return unknownId(
        'This response answers no pending request of this session: its id is unknown, expired or already answered',
      );
    }
    if (mapping.backendSessionId === undefined) {
      // An input of a 2026-07-28 backend: the call waiting for it (here or on another replica)
      // takes the answer.
      let delivery;
      try {
        delivery = await statelessInputs.deliver(mapping, answer);
      } catch (error) {
        // Not handed over: the id is answerable again (the client is told to retry).
        await elicitations.restore(mapping).catch(() => undefined);
        throw error;
      }
      return delivery === 'delivered'
        ? { outcome: 'delivered' }
        : unknownId('This response answers a request whose tool call has already ended');
    }
    let session;
    try {
      session = await this.sessionOf(mapping, personalHeaders);
    } catch (error) {
      // Nothing was sent: the id is answerable again (until it expires, which the backend is told).
      await elicitations.restore(mapping).catch(() => undefined);
      if (!(error instanceof PersonalCredentialError)) throw error;
      return {
        outcome: 'credential-failed',
        error: {
          code: PERSONAL_CREDENTIAL_ERROR_CODE,
          message: `Your answer was not sent to MCP server "${mapping.backend}": ${error.message}`,
          data: { server: error.server, reason: error.reason },
        },
      };
    }
    if (!session) {
      return unknownId(`MCP server "${mapping.backend}" is no longer configured in the broker`);
    }
    try {
      await this.post(session, mapping.backendRequestId, answer);
    } catch (error) {
      const failure = backendFailure(mapping.backend, error, false);
      this.options.logger.info(
        `Could not deliver an answer to MCP server "${mapping.backend}": ${failure.message}`,
      );
      return { outcome: 'backend-failed', error: toClientError(failure) };
    }
    return { outcome: 'delivered' };
  }

  /**
   * The call ended: its published input rounds go, then its gateway ids (from then on an answer
   * on another replica learns that the call ended). Failures are logged. Undefined when the call
   * left nothing to retire (most calls): no promise.
   */
  callEnded(call: AskingCall): Promise<void> | undefined {
    const published = this.options.statelessInputs.callEnded(call.id);
    // Most calls never ask the client anything; they cost the (possibly shared) store nothing.
    if (published === undefined && !call.registeredIds) return undefined;
    return this.retire(call, published);
  }

  private async retire(call: AskingCall, published: Promise<void> | undefined): Promise<void> {
    await published?.catch(error =>
      this.options.logger.warn(`Could not remove a call's published input requests: ${error}`),
    );
    if (!call.registeredIds) return;
    await this.options.elicitations
      .releaseCall(call.id)
      .catch(error =>
        this.options.logger.warn(`Could not retire the elicitation ids of a call: ${error}`),
      );
  }

  /**
   * The backend session that asked for `mapping`, if its backend is still configured; with the
   * person's endpoint when that session is theirs and open on this replica (their credential),
   * else with the headers `personalHeaders` obtains for them (a session held by another replica;
   * rejects with a PersonalCredentialError when none can be had).
   */
  private async sessionOf(
    mapping: ElicitationMapping,
    personalHeaders?: ClientResponseContext['personalHeaders'],
  ): Promise<LegacySessionRef | undefined> {
    const channels = this.options.backendOf(mapping.backend);
    if (channels === undefined) return undefined;
    const channel = channels.legacy;
    let endpoint = await channel.personalEndpointOf(
      mapping.clientSessionId,
      mapping.backendSessionId,
    );
    if (endpoint === undefined && personalHeaders !== undefined) {
      const headers = await personalHeaders(mapping.backend);
      if (headers !== undefined) endpoint = personalEndpointOf(channel.endpoint, headers);
    }
    return {
      channel,
      session: {
        id: mapping.backendSessionId,
        protocolVersion: mapping.protocolVersion,
        ...(endpoint === undefined ? {} : { endpoint }),
      },
    };
  }

  private post(
    { channel, session }: LegacySessionRef,
    rawId: RawJsonRpcId,
    answer: { result?: unknown; error?: unknown },
  ): Promise<void> {
    return channel.respond(session, rawId, answer, { timeoutMs: this.options.requestTimeoutMs });
  }

  /**
   * An id expired unanswered while its call still runs: tell the backend that no answer will come
   * (a JSON-RPC error with its own id), so the tool can go on instead of waiting for the call
   * timeout. A late answer from the client is refused with 404 as for any expired id.
   */
  private async expireUnanswered(gatewayId: string): Promise<void> {
    const { elicitations, logger } = this.options;
    const mapping = await elicitations.expire(gatewayId);
    if (!mapping) return; // answered (or the call ended) in time
    const session = await this.sessionOf(mapping);
    if (!session) return;
    try {
      await this.post(session, mapping.backendRequestId, {
        error: {
          code: ELICITATION_EXPIRED_ERROR_CODE,
          message: `The client did not answer within the broker's elicitation TTL of ${elicitations.ttlMs} ms (mcpBroker.elicitationTtl)`,
        },
      });
    } catch (error) {
      logger.debug(
        `Could not tell MCP server "${mapping.backend}" that an elicitation expired: ${error}`,
      );
    }
  }
}

function unknownId(message: string): ClientResponseOutcome {
  return { outcome: 'unknown-id', error: { code: UNKNOWN_ANSWER_ERROR_CODE, message } };
}

/** Waits for `promise`, but stops waiting (rejecting) as soon as `signal` aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      value => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      error => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
