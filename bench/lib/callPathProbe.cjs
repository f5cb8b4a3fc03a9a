/*
 * Preload (`node --require bench/lib/callPathProbe.cjs`) for the development backend: the path
 * a `tools/call` takes through the broker, as the stack (with its async part) at the moment
 * the broker sends the call's POST to the backend. Each POST whose body holds a `tools/call`
 * appends one JSON line `{ frames: [{ fn, file }] }` to the file named by CALL_PATH_OUT: the
 * frames of the broker plugin's sources (plugins/mcp-broker-backend/src), outermost first.
 *
 * What it counts: every function of the plugin on the stack, synchronous or awaiting (V8's
 * async stack traces follow `await`, not callbacks; a step reached through a callback or an
 * event is cut there, so the count is a floor). Benchmark use only (bench/callPath.mjs).
 */
'use strict';

const fs = require('node:fs');
const http = require('node:http');

const out = process.env.CALL_PATH_OUT;
const PLUGIN = /plugins\/mcp-broker-backend\/src\/(.+?):\d+:\d+\)?$/;

Error.stackTraceLimit = 200;

/** Appends the plugin's frames on the current stack when `text` is a `tools/call`. */
function record(text) {
  if (!out || !text.includes('"method":"tools/call"')) return;
  const frames = [];
  for (const line of new Error().stack.split('\n').slice(2)) {
    const file = line.match(PLUGIN)?.[1];
    if (file === undefined) continue;
    const fn = line
      .trim()
      .replace(/^at (async )?/, '')
      .replace(/ \(.*$/, '');
    frames.push({ fn, file });
  }
  fs.appendFileSync(out, `${JSON.stringify({ frames: frames.reverse() })}\n`);
}

// The broker's backend requests: undici's pools (issue #27) or, in older checkouts, node:http.
const end = http.ClientRequest.prototype.end;
http.ClientRequest.prototype.end = function probedEnd(chunk, ...rest) {
  record(typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString() : '');
  return end.call(this, chunk, ...rest);
};
try {
  const { Pool } = require('undici');
  const dispatch = Pool.prototype.dispatch;
  Pool.prototype.dispatch = function probedDispatch(options, handler) {
    record(typeof options?.body === 'string' ? options.body : '');
    return dispatch.call(this, options, handler);
  };
} catch {
  // A checkout without undici sends with node:http only.
}
