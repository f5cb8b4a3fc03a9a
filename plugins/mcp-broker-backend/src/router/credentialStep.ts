/*
 * The credential step of a person's request to a backend (spec §11): between routing (the
 * backend is known, the caller may use the item) and the hand-over to the ToolCallHandler.
 *
 * - It asks the BackendCredentialProvider for the request's headers; the handler hands them to
 *   the backend's channel, which sends every request of that person's call (and of their backend
 *   session: initialize, answers, cancellations) with them in place of the server's static
 *   headers — the person's credential and nothing else of theirs (the client's own token never
 *   enters this step).
 * - A call that needs a personal credential the person has not stored is answered here: a
 *   2025-11-25 client gets the URL elicitation required error (-32042) whose URL is the broker's
 *   page; a 2026-07-28 client an `input_required` result with a URL-mode `elicitation/create`
 *   and a sealed `requestState`, whose retry comes back through this step, is checked, stripped
 *   of the state and tried again. A client without URL-mode elicitation gets the same as a tool
 *   error naming the page.
 * - A failure to obtain the credential (a token exchange refused, a service principal on a
 *   person-only server) is the person's error: an `isError` result for `tools/call`, a JSON-RPC
 *   error otherwise — never a connection failure.
 * - A backend's 401/403 to a personal credential, reported by the handler as an HTTP-status
 *   failure, is turned into the person's error on its way to the client (and a cached exchanged
 *   token is forgotten): the backend's event connection and other people's calls are untouched.
 */
import type { BackstageCredentials, HttpAuthService } from '@backstage/backend-plugin-api';
import type { Request } from 'express';
import { BackendCredentialProvider, authOf } from '../identity/BackendCredentialProvider';
import {
  CredentialRequiredError,
  PERSONAL_CREDENTIAL_ERROR_CODE,
  PersonalCredentialError,
} from '../identity/credentialErrors';
import type { CallerIdentity } from '../identity/credentialModes';
import {
  CredentialRetryStateError,
  CredentialRetryStates,
} from '../identity/CredentialRetryStates';
import {
  isPlainObject,
  JsonRpcErrorCode,
  jsonRpcError,
  jsonRpcResult,
  type JsonRpcRequest,
} from '../protocol/jsonRpc';
import { clientRequestMethod } from '../protocol/mcpMethods';
import { completeResult, inputRequiredResult } from '../protocol/modernResults';
import type { BrokerBackend, ClientResponseWriter } from '../types';

/** The input key of the credential's URL elicitation in an `input_required` result. */
export const CREDENTIAL_INPUT_KEY = 'credential';

/** What the step needs; built once by plugin.ts. */
export interface CredentialStepOptions {
  provider: BackendCredentialProvider;
  httpAuth: HttpAuthService;
  retryStates: CredentialRetryStates;
}

/** Who makes one request, as the step sees it. */
export interface StepCaller {
  readonly principal: string;
  readonly era: 'legacy' | 'modern';
  /** The 2025-11-25 client session (told when a requested credential is stored). */
  readonly clientSessionId?: string;
  /** The capabilities the client declared (session or request `_meta`). */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
}

/** A request on its way to a backend after the step. */
export interface PreparedRequest {
  /** The headers of the person's requests to the backend; undefined in `broker` mode. */
  personalHeaders?: Readonly<Record<string, string>>;
  /** The request (a credential retry without its state). */
  request: JsonRpcRequest;
  /** Wraps the answer so a backend's refusal of a personal credential becomes the person's error. */
  guard(writer: ClientResponseWriter): ClientResponseWriter;
}

/** The credential step; see the file comment. */
export class CredentialStep {
  constructor(private readonly options: CredentialStepOptions) {}

  /** True when `backend` presents a person's credential (any mode but `broker`). */
  static isPersonal(backend: BrokerBackend): boolean {
    return authOf(backend).mode !== 'broker';
  }

  /**
   * Prepares `request` to `backend` for `caller` (whose verified Backstage credentials `req`
   * carries). Undefined when the step has answered the client itself through `reply`.
   */
  async prepare(
    req: Request,
    caller: StepCaller,
    backend: BrokerBackend,
    request: JsonRpcRequest,
    reply: ClientResponseWriter,
    signal: AbortSignal,
  ): Promise<PreparedRequest | undefined> {
    const mode = authOf(backend).mode;
    if (mode === 'broker') return { request, guard: writer => writer };
    const answerResult = (result: Record<string, unknown>) =>
      reply.finish(
        jsonRpcResult(request.id, caller.era === 'modern' ? completeResult(result) : result),
      );
    const toolResult = clientRequestMethod(request.method)?.toolResult === true;
    const personalError = (error: PersonalCredentialError) => {
      if (toolResult) {
        answerResult({ content: [{ type: 'text', text: error.message }], isError: true });
      } else {
        reply.finish(
          jsonRpcError(request.id, PERSONAL_CREDENTIAL_ERROR_CODE, error.message, {
            server: error.server,
            reason: error.reason,
          }),
        );
      }
    };

    let routed = request;
    const params = isPlainObject(request.params) ? request.params : {};
    if (caller.era === 'modern' && CredentialRetryStates.isCredentialState(params.requestState)) {
      try {
        this.options.retryStates.open(params.requestState, caller.principal, backend.name);
      } catch (error) {
        if (!(error instanceof CredentialRetryStateError)) throw error;
        reply.finish(jsonRpcError(request.id, JsonRpcErrorCode.InvalidParams, error.message), 400);
        return undefined;
      }
      const { requestState: _state, inputResponses: _answers, ...rest } = params;
      routed = { ...request, params: rest };
    }

    const identity = this.identityOf(req, caller);
    let headers;
    try {
      headers = await this.options.provider.requestHeaders(backend, identity, signal);
    } catch (error) {
      if (error instanceof CredentialRequiredError) {
        this.askForCredential(error, caller, backend, routed, reply, personalError);
        return undefined;
      }
      if (error instanceof PersonalCredentialError) {
        personalError(error);
        return undefined;
      }
      throw error;
    }

    const refusal = (message: unknown): unknown => {
      if (!isRefusalOf(message, request, backend.name)) return message;
      const status = (message as { error: { data: { httpStatus: number } } }).error.data.httpStatus;
      const error = this.options.provider.refused(backend, caller, status);
      if (toolResult) {
        const result = { content: [{ type: 'text', text: error.message }], isError: true };
        return jsonRpcResult(request.id, caller.era === 'modern' ? completeResult(result) : result);
      }
      return jsonRpcError(request.id, PERSONAL_CREDENTIAL_ERROR_CODE, error.message, {
        server: backend.name,
        reason: 'refused',
      });
    };
    return {
      personalHeaders: headers.headers,
      request: routed,
      guard: inner => ({
        send: message => inner.send(message),
        finish: (message, httpStatus) => {
          const replaced = refusal(message);
          return inner.finish(replaced as typeof message, replaced === message ? httpStatus : 200);
        },
        end: () => inner.end(),
        get answered() {
          return inner.answered;
        },
      }),
    };
  }

  /**
   * The headers of `caller`'s answer to a question of `backend` that reached a replica other than
   * the one holding their backend session (spec §11): the same credential their call presents,
   * obtained here for the answering (authenticated) request. Undefined in `broker` mode; rejects
   * with a {@link PersonalCredentialError} when no credential can be had (one the person has not
   * stored is not asked for here: the answer fails, it never goes with the broker's credentials).
   */
  async answerHeaders(
    req: Request,
    caller: StepCaller,
    backend: BrokerBackend,
    signal?: AbortSignal,
  ): Promise<Readonly<Record<string, string>> | undefined> {
    const mode = authOf(backend).mode;
    if (mode === 'broker') return undefined;
    try {
      const { headers } = await this.options.provider.requestHeaders(
        backend,
        this.identityOf(req, caller),
        signal,
      );
      return headers;
    } catch (error) {
      if (!(error instanceof CredentialRequiredError)) throw error;
      throw new PersonalCredentialError(
        backend.name,
        mode,
        `${error.elicitation.message} Open ${error.elicitation.url} in your browser to store it.`,
        'credential-required',
      );
    }
  }

  private identityOf(req: Request, caller: StepCaller): CallerIdentity {
    let credentials: Promise<BackstageCredentials> | undefined;
    return {
      principal: caller.principal,
      era: caller.era,
      ...(caller.clientSessionId === undefined ? {} : { clientSessionId: caller.clientSessionId }),
      credentials: () => {
        credentials ??= this.options.httpAuth.credentials(req, { allow: ['user', 'service'] });
        return credentials;
      },
    };
  }

  private askForCredential(
    error: CredentialRequiredError,
    caller: StepCaller,
    backend: BrokerBackend,
    request: JsonRpcRequest,
    reply: ClientResponseWriter,
    personalError: (error: PersonalCredentialError) => void,
  ): void {
    const { url, message } = error.elicitation;
    if (!declaresUrlElicitation(caller.clientCapabilities)) {
      personalError(
        new PersonalCredentialError(
          backend.name,
          'userCredential',
          `${message} Open ${url} in your browser to store it.`,
          'credential-required',
        ),
      );
      return;
    }
    if (caller.era === 'legacy') {
      const { code, message: text, data } = error.toJsonRpcError();
      reply.finish(jsonRpcError(request.id, code, text, data));
      return;
    }
    reply.finish(
      jsonRpcResult(
        request.id,
        inputRequiredResult({
          inputRequests: {
            [CREDENTIAL_INPUT_KEY]: {
              method: 'elicitation/create',
              params: { mode: 'url', message, url },
            },
          },
          requestState: this.options.retryStates.seal(caller.principal, backend.name),
        }),
      ),
    );
  }
}

/** True when the client declared URL-mode elicitation (`elicitation: { url: {} }`). */
function declaresUrlElicitation(capabilities: Readonly<Record<string, unknown>>): boolean {
  const elicitation = capabilities.elicitation;
  return isPlainObject(elicitation) && isPlainObject(elicitation.url);
}

/** The handler's final answer for `request` is an HTTP 401/403 of `backend`. */
function isRefusalOf(message: unknown, request: JsonRpcRequest, backend: string): boolean {
  if (!isPlainObject(message) || message.id !== request.id || !isPlainObject(message.error)) {
    return false;
  }
  const data = message.error.data;
  return (
    isPlainObject(data) &&
    data.backend === backend &&
    data.reason === 'http-status' &&
    (data.httpStatus === 401 || data.httpStatus === 403)
  );
}
