/*
 * Full garbage collections in another Node process through its inspector (the process runs
 * with `--inspect=127.0.0.1:0`): RSS right after a burst of work counts garbage V8 has not
 * collected yet, so memory per session is read after `HeapProfiler.collectGarbage`.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const WebSocket = require('ws');

/** The inspector's WebSocket URL from the process output ("Debugger listening on ws://…"). */
export function inspectorUrl(output) {
  const match = output.match(/Debugger listening on (ws:\/\/\S+)/);
  if (!match)
    throw new Error('the process printed no inspector URL (start it with --inspect=127.0.0.1:0)');
  return match[1];
}

/**
 * An inspector session: `gc()` collects garbage, `heapUsedKiB()` reads V8's used heap,
 * `send(method, params)` sends any other inspector command (e.g. `Profiler.start`).
 */
export async function connectInspector(url) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map();
  socket.on('message', data => {
    const message = JSON.parse(data.toString());
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    send,
    async gc() {
      // Twice: the first pass may only queue finalizers that free more on the second.
      await send('HeapProfiler.collectGarbage');
      await send('HeapProfiler.collectGarbage');
    },
    async heapUsedKiB() {
      const { usedSize } = await send('Runtime.getHeapUsage');
      return usedSize / 1024;
    },
    close() {
      socket.close();
    },
  };
}
