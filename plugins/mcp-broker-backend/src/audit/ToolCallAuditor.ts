/*
 * Audit events of tool calls (spec §8): every `tools/call` is one `mcp-broker.tool-call` event
 * through Backstage's auditor service, with the principal, the server, the tool (the backend's
 * own name), the credential mode the call presented (spec §11; never a credential), the outcome
 * (`succeeded`, `failed`, `denied`, or `rate-limited` with `retryAfterMs`) and the duration, the
 * call's trace id when tracing is on, the access grant whose plan admitted (or refused) it
 * (`grant`, its feed id; never the product or plan, contract mcp-access §6.4), and the curated
 * endpoint it came through (spec §13; absent on /mcp). Arguments and results are never recorded: the event's
 * metadata is built from names only.
 *
 * The principal is in the metadata rather than taken by the auditor from the request: the
 * auditor would verify the request's token again on every call, which the broker avoids (see
 * VerifiedPrincipalCache). The auditor's own actor is then the broker plugin.
 *
 * The outcome is read from the final response the ToolCallHandler writes to the call's answer
 * (`observe`), whether it leaves as the last event of a stream or as plain JSON.
 *
 * A request of another method that a rate limit refused (`prompts/get`, `resources/read`,
 * `completion/complete`: spec §12) is one `mcp-broker.request` event of the same shape, with
 * `method` and the `item` (the prompt's own name, the resource's URI) in place of `tool`.
 *
 * The same two points count the call's usage (UsageRecorder, docs/contracts/mcp-access.md §7.1),
 * when the plugin gives a recorder: an admitted `tools/call` once it ends (an error, an `isError`
 * result or an end without a result counts as an error; an `input_required` answer does not end
 * the call: its retry is counted when it ends), and a `tools/call` a rate limit refused. Denied
 * and unknown tools, and refusals of other methods, are not counted.
 *
 * Failure modes: an auditor that throws fails nothing but its own event (logged as a warning):
 * the tool call's answer to the client never depends on the audit trail's health.
 */
import type { AuditorService, LoggerService } from '@backstage/backend-plugin-api';
import type { JsonObject } from '@backstage/types';
import { isPlainObject, type JsonRpcMessage } from '../protocol/jsonRpc';
import { clientRequestMethod } from '../protocol/mcpMethods';
import { taskRefOf } from '../tasks/TaskAuditor';
import { resultOfFinalMessage } from '../telemetry/requestResult';
import type { ClientResponseWriter } from '../types';
import { subjectOfPrincipal } from '../rateLimits/RateLimitRules';
import type { UsageOutcome, UsageRecorder } from '../usage/UsageRecorder';

/** The auditor event id (the auditor prefixes the plugin id: `mcp-broker.tool-call`). */
export const TOOL_CALL_EVENT_ID = 'tool-call';
/** The event id of a refused request of another method (`mcp-broker.request`). */
export const REQUEST_EVENT_ID = 'request';

/** How a tool call ended, as the audit trail records it. */
export type ToolCallOutcome = 'succeeded' | 'failed' | 'denied' | 'rate-limited';

/** What a tool call is, for its audit event. */
export interface AuditedToolCall {
  principal: string;
  /** The configured server name; undefined for a tool that exists nowhere. */
  server: string | undefined;
  /** The backend's own tool name, or the name the client asked for when it is unknown. */
  tool: string;
  /** The trace the call belongs to (when tracing is on), to follow it from the audit trail. */
  traceId?: string;
  /** Which credential the call presented (spec §11: the mode, never a value). */
  credentialMode?: string;
  /** The access grant whose plan admitted the call (its feed id, `<source>:<id>`). */
  grant?: string;
  /** The curated endpoint the call came through (spec §13); absent on /mcp. */
  endpoint?: string;
  /**
   * The MCP method when it is not `tools/call` (then `tool` is the item: the prompt's own name,
   * the resource's URI) — a `mcp-broker.request` event.
   */
  method?: string;
  /**
   * How an MCP App's call by its server's own tool name was resolved (contract §3.6: `hint` or
   * `unique`); absent for a call by the broker name.
   */
  nameResolution?: 'hint' | 'unique';
  /** The server an app's origin hint named (with `nameResolution: "hint"`). */
  appOrigin?: string;
}

/** What a call's end adds to its event. */
export interface AuditedCallEnd {
  /**
   * The call created a task: the task's `taskRef` (never its id), recorded with
   * `resultType: "task"` (contract tasks-and-apps §2.14).
   */
  taskRef?: string;
}

/** One tool call's audit event in progress. */
export interface ToolCallAuditRecord {
  /** Wraps the call's answer to see how the call ends (the final response). */
  observe(response: ClientResponseWriter): ClientResponseWriter;
  /**
   * Records the end: from the final response seen on the stream, or `failed` without one, with
   * what `ended` adds.
   */
  finish(ended?: AuditedCallEnd): Promise<void>;
}

/** Records tool calls through the auditor service. */
export class ToolCallAuditor {
  readonly #auditor: AuditorService;
  readonly #logger: LoggerService;
  readonly #usage: UsageRecorder | undefined;

  static create(options: {
    auditor: AuditorService;
    logger: LoggerService;
    /** Counts each call's usage at the same points (see the file comment). */
    usage?: UsageRecorder;
  }): ToolCallAuditor {
    return new ToolCallAuditor(options.auditor, options.logger, options.usage);
  }

  private constructor(auditor: AuditorService, logger: LoggerService, usage?: UsageRecorder) {
    this.#auditor = auditor;
    this.#logger = logger;
    this.#usage = usage;
  }

  /**
   * Records a call that was refused (denied, rate-limited, or of a tool that exists nowhere) in
   * one event; `meta` adds what the refusal said (e.g. `retryAfterMs`).
   */
  async refused(
    call: AuditedToolCall,
    outcome: 'denied' | 'failed' | 'rate-limited',
    reason: string,
    meta: JsonObject = {},
  ): Promise<void> {
    if (outcome === 'rate-limited') this.#count(call, 'rate-limited');
    await this.#guard(async () => {
      const event = await this.#auditor.createEvent({
        eventId: isToolCall(call) ? TOOL_CALL_EVENT_ID : REQUEST_EVENT_ID,
        severityLevel: 'medium',
        meta: metaOf(call),
      });
      await event.fail({ error: auditError(reason), meta: { ...meta, outcome, durationMs: 0 } });
    });
  }

  /**
   * Starts the event of a call that goes to its backend. The event's first entry is recorded
   * meanwhile, off the call's path (the call does not wait for the auditor); `finish` waits for
   * it, so the entries stay in order.
   */
  begin(call: AuditedToolCall, requestId: string | number): ToolCallAuditRecord {
    const started = performance.now();
    let final: JsonRpcMessage | undefined;
    const begun = this.#guard(() =>
      this.#auditor.createEvent({
        eventId: TOOL_CALL_EVENT_ID,
        severityLevel: 'medium',
        meta: metaOf(call),
      }),
    );
    const see = (message: unknown) => {
      if (
        isPlainObject(message) &&
        message.id === requestId &&
        ('result' in message || 'error' in message)
      ) {
        final = message as unknown as JsonRpcMessage;
      }
    };
    return {
      observe: response => ({
        send(message) {
          see(message);
          return response.send(message);
        },
        finish(message, httpStatus) {
          see(message);
          return response.finish(message, httpStatus);
        },
        end: () => response.end(),
        get answered() {
          return response.answered;
        },
      }),
      finish: async (ended = {}) => {
        const failure = resultOfFinalMessage(final).reason;
        if (!isInputRequired(final))
          this.#count(call, failure === undefined ? 'succeeded' : 'failed');
        const event = await begun;
        if (event === undefined) return;
        const durationMs = Math.round(performance.now() - started);
        // A 2025-11-25 task's relay names the task it created; a 2026-07-28 call learns it
        // from its answer (the broker's id).
        const task =
          ended.taskRef === undefined
            ? createdTaskMeta(final)
            : { taskRef: ended.taskRef, resultType: 'task' };
        await this.#guard(() =>
          failure === undefined
            ? event.success({ meta: { outcome: 'succeeded', durationMs, ...task } })
            : event.fail({
                error: auditError(failure),
                meta: { outcome: 'failed', durationMs, ...task },
              }),
        );
      },
    };
  }

  /** Counts a tool call's usage (nothing for other methods, or a tool that exists nowhere). */
  #count(call: AuditedToolCall, outcome: UsageOutcome): void {
    if (this.#usage === undefined || call.server === undefined || !isToolCall(call)) return;
    this.#usage.record(
      { principal: subjectOfPrincipal(call.principal), server: call.server, tool: call.tool },
      outcome,
    );
  }

  async #guard<T>(record: () => Promise<T>): Promise<T | undefined> {
    try {
      return await record();
    } catch (error) {
      this.#logger.warn(`MCP broker: could not record a tool-call audit event: ${error}`);
      return undefined;
    }
  }
}

function isToolCall(call: AuditedToolCall): boolean {
  return call.method === undefined || clientRequestMethod(call.method)?.audit === 'tool-call';
}

/** A 2026-07-28 `input_required` answer: the call goes on with the client's retry. */
function isInputRequired(final: JsonRpcMessage | undefined): boolean {
  const result = final && 'result' in final ? final.result : undefined;
  return isPlainObject(result) && result.resultType === 'input_required';
}

/**
 * `taskRef` and `resultType` of a final answer that is a task — 2026-07-28 `resultType: "task"`,
 * or a 2025-11-25 `CreateTaskResult` the broker made from one (tasks-and-apps §2.12.3) — or `{}`.
 */
function createdTaskMeta(final: JsonRpcMessage | undefined): JsonObject {
  const result = final && 'result' in final ? final.result : undefined;
  if (!isPlainObject(result)) return {};
  const task = result.resultType === 'task' ? result : result.task;
  return isPlainObject(task) && typeof task.taskId === 'string'
    ? { taskRef: taskRefOf(task.taskId), resultType: 'task' }
    : {};
}

function metaOf(call: AuditedToolCall): JsonObject {
  return {
    principal: auditPrincipal(call.principal),
    server: call.server ?? null,
    ...(isToolCall(call)
      ? { tool: call.tool.slice(0, 200) }
      : { method: call.method!, item: call.tool.slice(0, 200) }),
    ...(call.traceId === undefined ? {} : { traceId: call.traceId }),
    ...(call.credentialMode === undefined ? {} : { credentialMode: call.credentialMode }),
    ...(call.grant === undefined ? {} : { grant: call.grant }),
    ...(call.endpoint === undefined ? {} : { endpoint: call.endpoint }),
    ...(call.nameResolution === undefined ? {} : { nameResolution: call.nameResolution }),
    ...(call.appOrigin === undefined ? {} : { appOrigin: call.appOrigin }),
  };
}

/**
 * The principal as the audit trail names it: a user's entity ref (`user:default/alice`), or
 * `service:<subject>` for a service (the broker's session principal is `user:<ref>`).
 */
function auditPrincipal(principal: string): string {
  return principal.startsWith('user:') ? principal.slice('user:'.length) : principal;
}

/** An error for the auditor's `fail`: the reason only (its stack would point at this file). */
function auditError(reason: string): Error {
  const error = new Error(reason);
  error.stack = `Error: ${reason}`;
  return error;
}
