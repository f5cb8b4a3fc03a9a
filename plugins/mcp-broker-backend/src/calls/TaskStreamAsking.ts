/*
 * The requests a 2025-11-25 backend puts to a 2025-11-25 client during a task's `tasks/result`
 * (docs/contracts/tasks-and-apps.md §2.12.1), asked the way a call's are (spec §4): each reaches
 * the client on that stream under a fresh gateway id of the AnswerRouter (bound to the client
 * session, single use, expiring with `elicitationTtl` — the backend is then told no answer will
 * come), and the client's answer, posted to any replica, goes to the backend session that asked
 * with the backend's own id. The stream is one asking "call": when it ends, its unanswered ids
 * are retired (a later answer is refused with 404) and their expiry timers stop.
 */
import { randomUUID } from 'node:crypto';
import type { BackendSessionRequest, TaskStreamAsker } from '../types';
import type { AnswerRouter } from './AnswerRouter';
import type { AskingCall, ClientMessageSink } from './callTypes';

/** One `tasks/result` stream asking its client; see the file comment. */
export class TaskStreamAsking implements AskingCall, TaskStreamAsker {
  /** Keys this stream's gateway ids. */
  readonly id = randomUUID();
  /** {@inheritDoc AskingCall.registeredIds} */
  registeredIds = false;
  private readonly expiryTimers: NodeJS.Timeout[] = [];
  private ended = false;

  constructor(
    /** The configured name of the task's server. */
    readonly backend: string,
    /** The client session whose stream it is. */
    readonly owner: string,
    readonly sink: ClientMessageSink,
    private readonly router: AnswerRouter,
  ) {}

  /** {@inheritDoc AskingCall.addExpiry} */
  addExpiry(timer: NodeJS.Timeout): void {
    if (this.ended) clearTimeout(timer);
    else this.expiryTimers.push(timer);
  }

  /** {@inheritDoc TaskStreamAsker.ask} */
  async ask(request: BackendSessionRequest): Promise<void> {
    const channels = this.router.backendOf(this.backend);
    // Thrown, so the backend is refused at once rather than left waiting for an answer.
    if (this.ended) throw new Error('the client stream of this task has ended');
    if (channels === undefined) throw new Error(`MCP server "${this.backend}" is gone`);
    await this.router.relayRequest(
      this,
      {
        channel: channels.legacy,
        session: { id: request.sessionId, protocolVersion: request.protocolVersion },
      },
      request.rawId,
      request.message,
    );
  }

  /** {@inheritDoc TaskStreamAsker.end} */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.expiryTimers.forEach(clearTimeout);
    this.expiryTimers.length = 0;
    await this.router.callEnded(this);
  }
}
