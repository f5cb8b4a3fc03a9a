/*
 * JSON-RPC messages as they travel between the broker and backends, read without losing the
 * lexical form of ids.
 *
 * JSON-RPC allows a request id to be any string or number, and `7.5`, `7.0` or
 * `12345678901234567890` are all legal. `JSON.parse` would turn `7.0` into `7` and lose precision
 * on big integers, so whatever id a backend sends is kept as its raw JSON token and spliced back
 * verbatim when the broker answers it. The SDK's schemas are deliberately not used here: they drop
 * messages with float ids.
 */

import { jsonRpcMessageKind, type JsonRpcMessageKind } from './jsonRpc';

/** The exact JSON text of a JSON-RPC id, e.g. `"abc"`, `42` or `7.5`. */
export type RawJsonRpcId = string;

/** A JSON-RPC message read from text, with its id kept as it was written. */
export interface ParsedJsonRpcMessage {
  /** The parsed message (ids as JavaScript values; use {@link ParsedJsonRpcMessage.rawId} to echo one). */
  message: Record<string, unknown>;
  /** The `id` member's raw JSON token, or undefined when the message has no `id`. */
  rawId: RawJsonRpcId | undefined;
  /** The text the message was read from. */
  text: string;
}

export type { JsonRpcMessageKind };

/**
 * Reads one JSON-RPC message from text. Returns undefined when the text is not a JSON object;
 * batches are not part of MCP 2025-06-18 and later, so an array is not a message either.
 */
export function parseJsonRpcMessage(text: string): ParsedJsonRpcMessage | undefined {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return undefined;
  }
  return {
    message: message as Record<string, unknown>,
    rawId: findRawTopLevelMember(text, 'id'),
    text,
  };
}

/**
 * Classifies a message read from text (the envelope only: {@link jsonRpcMessageKind}, the one
 * classifier; an `id` member always has its raw token here, since the text is valid JSON).
 */
export function classifyJsonRpcMessage(parsed: ParsedJsonRpcMessage): JsonRpcMessageKind {
  return jsonRpcMessageKind(parsed.message);
}

/**
 * Finds the raw JSON text of a member of the top-level object in `text` (which must be valid
 * JSON, as checked by `JSON.parse` first). Returns the last occurrence, as `JSON.parse` does.
 */
export function findRawTopLevelMember(text: string, name: string): string | undefined {
  let found: string | undefined;
  for (const [key, raw] of rawTopLevelMembers(text)) {
    if (key === name) found = raw;
  }
  return found;
}

/** The members of the top-level object of valid JSON `text`, as [name, raw JSON text] pairs. */
export function rawTopLevelMembers(text: string): Array<[string, string]> {
  const members: Array<[string, string]> = [];
  let i = skipWhitespace(text, 0);
  if (text[i] !== '{') return members;
  i = skipWhitespace(text, i + 1);
  while (i < text.length && text[i] === '"') {
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWhitespace(text, keyEnd);
    i = skipWhitespace(text, i + 1); // past the ':'
    const valueEnd = skipValue(text, i);
    members.push([key, text.slice(i, valueEnd)]);
    i = skipWhitespace(text, valueEnd);
    if (text[i] === ',') i = skipWhitespace(text, i + 1);
  }
  return members;
}

function skipWhitespace(text: string, start: number): number {
  let i = start;
  while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  return i;
}

function skipString(text: string, i: number): number {
  // text[i] is the opening quote
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

function skipValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return skipString(text, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (c === '"') {
        j = skipString(text, j) - 1;
      } else if (c === '{' || c === '[') {
        depth++;
      } else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return text.length;
  }
  let j = i;
  while (j < text.length && !',}] \t\n\r'.includes(text[j])) j++;
  return j;
}
