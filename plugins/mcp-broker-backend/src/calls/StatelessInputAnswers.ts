/*
 * A 2025 client's answers to the input requests of a 2026-07-28 backend (spec §9 "Backends"),
 * wherever they land. The replica whose call waits for them (the holder) asked each input under
 * a gateway id (ElicitationIdMap); the answering replica has claimed that id — atomically, once
 * across replicas — before it comes here.
 *
 * - An answer on the holder resolves the call's waiter at once, in memory.
 * - With a shared HeldCallStore, the holder publishes each round before the client sees it and
 *   waits for its call's signals while it waits for answers (replicas/SignalBus.ts); an answer on
 *   another replica is handed over as an `answer` signal to the call, in one statement that
 *   succeeds only while the round is published. The answering replica says 202 only after that
 *   write; an answer whose call ended meanwhile gets a 404 saying so.
 * - The holder deletes the round and its signals when the call ends; what is left (a crash)
 *   expires and is swept. Only the gateway ids of the round are taken from its signals, so
 *   nothing can reach another call.
 * Without a shared store (one replica) nothing is published or read.
 *
 * Failure modes: a failed publish leaves the round answerable on the holder only (answers
 * elsewhere get the "call ended" 404); a failed read is logged by the bus and retried at the
 * next poll; a failed hand-over throws (the caller answers 503 and gives the id back).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';
import type { ElicitationMapping } from './ElicitationIdMap';
import type { ClientAnswer } from './callTypes';
import { callAddress, type Signal, type SignalBus } from '../replicas/SignalBus';
import { ROUND_RELAY_POLL_MS } from './roundRelay';
import { isPlainObject } from '../protocol/jsonRpc';
import { MODERN_PROTOCOL_VERSION } from '../protocol/versions';

/** What became of an answer handed to {@link StatelessInputAnswers.deliver}. */
export type StatelessAnswerDelivery = 'delivered' | 'call-ended';

/** Options of {@link StatelessInputAnswers}. */
export interface StatelessInputAnswersOptions {
  logger: LoggerService;
  /**
   * The held rounds and the bus between replicas; without them answers reach only calls on this
   * replica.
   */
  shared?: { store: HeldCallStore; bus: SignalBus };
  /** How long a handed-over answer is kept for the holder (it reads it within a poll). */
  answerTtlMs: number;
}

/** One round of inputs a call waits for; see {@link StatelessInputAnswers.open}. */
export interface InputAnswerRound {
  /** Resolves with the answer to `gatewayId` (one of the round's), however it arrives. */
  answerTo(gatewayId: string): Promise<ClientAnswer>;
  /** Stops waiting: forgets the round's waiters and stops reading its mailbox. */
  close(): void;
}

/** See the file comment. */
export class StatelessInputAnswers {
  /** Waiters of the rounds open on this replica, by gateway id. */
  private readonly waiters = new Map<string, (answer: ClientAnswer) => void>();
  /** Calls whose rounds were published (to delete at the call's end). */
  private readonly published = new Set<string>();

  constructor(private readonly options: StatelessInputAnswersOptions) {}

  /**
   * Opens a round of call `callId` for `mappings` (the gateway ids the client is about to be
   * asked): resolves once answers can arrive from any replica, i.e. after the round is published
   * (with a shared store). Put the requests to the client only then; close the round in any case.
   */
  async open(callId: string, round: number, mappings: ElicitationMapping[]) {
    const answers = new Map<string, Promise<ClientAnswer>>();
    for (const mapping of mappings) {
      answers.set(
        mapping.gatewayId,
        new Promise(resolve => this.waiters.set(mapping.gatewayId, resolve)),
      );
    }
    let unwatch: () => void = () => undefined;
    const inputRound: InputAnswerRound = {
      answerTo: gatewayId => answers.get(gatewayId)!,
      close: () => {
        unwatch();
        for (const gatewayId of answers.keys()) this.waiters.delete(gatewayId);
      },
    };
    const shared = this.options.shared;
    if (shared === undefined || mappings.length === 0) return inputRound;
    try {
      this.published.add(callId);
      await shared.store.publishRound({
        callId,
        round,
        backend: mappings[0].backend,
        protocolVersion: MODERN_PROTOCOL_VERSION,
        // The client's keys are the gateway ids; the backend's, its input keys (JSON tokens).
        asked: mappings.map(m => ({ key: m.gatewayId, rawId: m.backendRequestId })),
        expiresAt: Math.max(...mappings.map(m => m.expiresAt)),
      });
    } catch (error) {
      this.options.logger.warn(
        `Could not publish a call's input requests for other replicas: ${error}`,
      );
      return inputRound;
    }
    unwatch = shared.bus.watch(
      callAddress(callId),
      signal => this.takeHandedOver(signal, answers),
      ROUND_RELAY_POLL_MS,
    );
    return inputRound;
  }

  /**
   * Delivers the answer to `mapping` (already claimed): to the waiter on this replica, else
   * through the shared store to the replica whose call waits. Throws when the store fails.
   */
  async deliver(
    mapping: ElicitationMapping,
    answer: ClientAnswer,
  ): Promise<StatelessAnswerDelivery> {
    const waiter = this.waiters.get(mapping.gatewayId);
    if (waiter !== undefined) {
      waiter(answer);
      return 'delivered';
    }
    const store = this.options.shared?.store;
    if (store === undefined) return 'call-ended';
    const message = JSON.stringify({
      jsonrpc: '2.0',
      id: mapping.gatewayId,
      ...(answer.error === undefined ? { result: answer.result ?? {} } : { error: answer.error }),
    });
    const now = Date.now();
    const handedOver = await store.deliverAnswer(
      mapping.callId,
      message,
      now,
      now + this.options.answerTtlMs,
    );
    return handedOver ? 'delivered' : 'call-ended';
  }

  /** The call ended: its published rounds and their signals go (no-op when none were). */
  callEnded(callId: string): Promise<void> | undefined {
    if (!this.published.delete(callId)) return undefined;
    return this.options.shared?.store.deleteCall(callId);
  }

  /**
   * A signal to the call: the answer to one of the round's gateway ids is taken (consumed);
   * other signals are not this round's business.
   */
  private takeHandedOver(signal: Signal, answers: Map<string, unknown>): boolean {
    if (signal.kind !== 'answer') return false;
    let answer: unknown;
    try {
      answer = JSON.parse(signal.payload ?? '');
    } catch {
      this.options.logger.warn('Dropped an unreadable answer handed over by another replica');
      return true;
    }
    const id = isPlainObject(answer) ? answer.id : undefined;
    const waiter = typeof id === 'string' && answers.has(id) ? this.waiters.get(id) : undefined;
    // Answered already, or not this round's: nobody else's either.
    if (waiter !== undefined) waiter(answer as unknown as ClientAnswer);
    return true;
  }
}
