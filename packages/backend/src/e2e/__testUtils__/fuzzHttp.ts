/*
 * How the fuzzers (mcpFuzz.ts, portalFuzz.ts) send one generated request to the real backend and
 * read what came back, whatever it is: a JSON body, an event stream, nothing, or no answer at all.
 * A generated request can be anything a client could send, so nothing here assumes the answer is
 * well-formed; the fuzzers' checks decide that.
 */

import fc from 'fast-check';

/** One generated HTTP request; `path` is sent as is (already encoded, or deliberately not). */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The raw body (absent: none). */
  body?: string;
}

/** What came back. */
export interface FuzzAnswer {
  status: number;
  headers: Headers;
  /** The whole body; an event stream that stays open (a GET stream) only up to its first event. */
  text: string;
  /** A GET event stream answered 200 and left open (closed here after its headers). */
  openStream: boolean;
}

/**
 * How long one answer may take. Every generated request is answered at once by the broker or the
 * portal (or by the example servers behind the broker, which answer at once too); an answer still
 * missing after this long is a hang, which the fuzzers report as a failure.
 */
export const ANSWER_TIMEOUT_MS = 20_000;

/** Sends `request` to `baseUrl` and reads the answer; rejects only when there was none. */
export async function sendFuzzRequest(baseUrl: string, request: FuzzRequest): Promise<FuzzAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ANSWER_TIMEOUT_MS);
  try {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
      redirect: 'manual',
    });
    const isStream = response.headers.get('content-type')?.includes('text/event-stream') ?? false;
    if (request.method === 'GET' && response.status === 200 && isStream) {
      // A client's GET stream stays open by design: it being open is the answer.
      controller.abort();
      return { status: response.status, headers: response.headers, text: '', openStream: true };
    }
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      openStream: false,
    };
  } catch (error) {
    throw new Error(
      controller.signal.aborted
        ? `no answer within ${ANSWER_TIMEOUT_MS} ms to ${request.method} ${request.path}`
        : `the connection failed for ${request.method} ${request.path}: ${error}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

/** Header values a client can send: printable ASCII (fetch refuses control characters). */
export const PRINTABLE_ASCII = Array.from({ length: 0x7f - 0x20 }, (_, i) =>
  String.fromCharCode(0x20 + i),
);

/** The answer's body as JSON, or undefined when it is not JSON. */
export function parsedJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** A short description of a request and its answer, for a failure message. */
export function describeExchange(request: FuzzRequest, answer: FuzzAnswer | undefined): string {
  // Never a token in a failure message (it ends up in CI logs).
  const headers = { ...request.headers };
  if (headers.authorization !== undefined) headers.authorization = 'Bearer <the fuzzing user>';
  const sent = `${request.method} ${request.path} ${JSON.stringify(headers)} ${
    request.body === undefined ? '(no body)' : request.body.slice(0, 500)
  }`;
  if (!answer) return sent;
  return `${sent}\n  → ${answer.status} ${answer.headers.get('content-type') ?? ''} ${answer.text.slice(0, 500)}`;
}

/** A run of a fuzzer: the seed it generates from and how many requests it sends. */
export interface FuzzRun {
  seed: number;
  numRuns: number;
}

/**
 * Sends every request `requests` generates to `baseUrl` and throws on the first answer for which
 * `problemsOf` names a problem (or on no answer at all), with the request and the answer.
 * Failures are not shrunk: each step of a shrink would be one more round trip to the backend,
 * and the seed and path fast-check reports replay the same request.
 */
export async function assertEveryAnswer(
  baseUrl: string,
  requests: fc.Arbitrary<FuzzRequest>,
  problemsOf: (answer: FuzzAnswer) => string[],
  { seed, numRuns }: FuzzRun,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(requests, async request => {
      const answer = await sendFuzzRequest(baseUrl, request);
      const problems = problemsOf(answer);
      if (problems.length > 0) {
        throw new Error(`${problems.join('; ')}\n${describeExchange(request, answer)}`);
      }
    }),
    { seed, numRuns, endOnFailure: true },
  );
}
