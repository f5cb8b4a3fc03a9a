/*
 * Preload (`node --require`) for an end-to-end test's backend process whose wall clock the test
 * may move forward: a stand-in for waiting (an access token lives an hour; a test cannot wait
 * that long). The parent sends `{ type: 'advance-clock', ms }` over the IPC channel and gets
 * `{ type: 'clock-advanced', offsetMs }` back once every later `Date.now()` and `new Date()` in
 * this process reads that much later. Only the wall clock moves: timers, `performance.now()` and
 * `process.hrtime()` are untouched, so nothing fires early. Loaded only by tests that ask for it
 * (startBackendProcess's `advancingClock` option); never by the development or production backend.
 */
'use strict';

const RealDate = Date;
let offsetMs = 0;
const now = () => RealDate.now() + offsetMs;

// Replaced through Reflect.set, not `globalThis.Date = …`: in a JavaScript file that assignment
// would declare a second global `Date` for the type checker.
Reflect.set(
  globalThis,
  'Date',
  new Proxy(RealDate, {
    construct(target, args, newTarget) {
      return Reflect.construct(target, args.length === 0 ? [now()] : args, newTarget);
    },
    apply() {
      // `Date()` called as a function: the current time as a string.
      return new RealDate(now()).toString();
    },
    get(target, property, receiver) {
      if (property === 'now') return now;
      return Reflect.get(target, property, receiver);
    },
  }),
);

process.on('message', message => {
  if (message === null || typeof message !== 'object' || message.type !== 'advance-clock') return;
  offsetMs += Number(message.ms);
  process.send?.({ type: 'clock-advanced', offsetMs });
});
