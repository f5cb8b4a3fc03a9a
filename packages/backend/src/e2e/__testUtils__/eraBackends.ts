/*
 * The example fleet's backends of both protocol eras behind one interface, so that an era matrix
 * (client era × backend era) is one table on one replica (brokerEraMatrix.test.ts) or two
 * (replicasEras.test.ts): the legacy example server (2025-11-25, SDK 1.x, sessions) and the
 * modern one (2026-07-28, SDK v2, stateless) differ in their `confirm` arguments and answer text,
 * how a test sees a cancel arrive, and how a broker's event channel to them is counted.
 */
import { waitFor } from '../brokerTestKit';
import { ELICITATION_ANSWER, Era, EraClient } from './eraClients';
import { ExampleFleet } from './exampleFleet';

/** A `count` call long enough to be cancelled while it runs. */
const LONG_COUNT = { steps: 1000, delayMs: 20 };

/** What an era matrix needs of a backend, whatever its era. */
export interface EraBackend {
  /** Its name in the broker's config: the prefix of its tools. */
  name: string;
  /** The `confirm` tool's arguments asking `message`. */
  confirmArgs(message: string): Record<string, unknown>;
  /** The `confirm` tool's answer text to ELICITATION_ANSWER. */
  confirmedText: string;
  addTool(name: string): void;
  /**
   * Announces `prompts/list_changed` on every event channel of the backend: a marker that
   * reaches each client after every change the backend announced before it.
   */
  announcePromptsChanged(): void;
  /** Number of event channels brokers hold open to it (legacy: GET streams; modern: listens). */
  eventChannels(): number;
  /** Called at a call's first progress: a check that the backend saw that call cancelled. */
  watchCancel(): () => boolean;
}

/** The fleet's backends by era. */
export function eraBackends(fleet: ExampleFleet): Record<Era, EraBackend> {
  return {
    legacy: {
      name: 'example',
      confirmArgs: question => ({ question }),
      confirmedText: JSON.stringify(ELICITATION_ANSWER),
      addTool: name => fleet.legacy.addTool(name),
      announcePromptsChanged: () => fleet.legacy.announcePromptsChanged(),
      eventChannels: () => fleet.legacy.openEventStreams(),
      watchCancel() {
        const before = fleet.legacy.cancelledToolCalls();
        return () => fleet.legacy.cancelledToolCalls() > before;
      },
    },
    modern: {
      name: 'modern',
      confirmArgs: message => ({ message }),
      confirmedText: 'confirmed: true',
      addTool: name => fleet.modern.addTool(name),
      announcePromptsChanged: () => fleet.modern.announcePromptsChanged(),
      eventChannels: () => fleet.modern.listenStreams(),
      // At the first progress the call's stream is open; 2026-07-28 has no
      // notifications/cancelled: closing that stream is the cancel.
      watchCancel: () => () => fleet.modern.openToolCalls() === 0,
    },
  };
}

/**
 * Starts a long `count` at `backend` through `client`, cancels it at its first progress (so the
 * backend call is running), and waits until the backend saw the cancel.
 */
export async function expectCancelReachesBackend(
  client: EraClient,
  backend: EraBackend,
): Promise<void> {
  const controller = new AbortController();
  let cancelSeen: (() => boolean) | undefined;
  const call = client.callTool(`${backend.name}_count`, LONG_COUNT, {
    signal: controller.signal,
    onprogress: () => {
      if (cancelSeen !== undefined) return;
      cancelSeen = backend.watchCancel();
      controller.abort('the user pressed stop');
    },
  });
  await expect(call).rejects.toThrow();
  expect(cancelSeen).toBeDefined();
  await waitFor(() => cancelSeen!(), 10_000, 'the backend to see the cancel');
}
