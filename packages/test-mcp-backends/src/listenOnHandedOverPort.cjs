/*
 * Preload (`node --require`) for a child process that must listen on a port its parent reserved
 * (see handedOverPort.ts). The parent binds the port, keeps it bound, and sends the listening
 * handle over IPC; here, a `listen()` on that port number (HANDED_OVER_PORT) listens on the
 * received handle instead of binding again, so no other process can take the port in between.
 * A listen() that comes before the handle waits for it; any other listen() is left alone.
 */
'use strict';
const net = require('node:net');

const handedOverPort = Number(process.env.HANDED_OVER_PORT);
let handle;
const waiting = [];

process.on('message', (message, received) => {
  if (message !== 'handed-over-listen-handle' || received === undefined) return;
  // Node hands the handle over as a listening server of its own: until the program listens, a
  // connection it accepts is dropped (the client sees a reset and tries again).
  received.on('connection', socket => socket.destroy());
  handle = received;
  // The IPC channel must not keep the process alive once the handle is here.
  process.channel?.unref();
  for (const listen of waiting.splice(0)) listen();
});

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnHandedOverPort(...args) {
  const first = args[0];
  const port = typeof first === 'object' && first !== null ? first.port : first;
  if (!Number.isInteger(handedOverPort) || Number(port) !== handedOverPort) {
    return listen.apply(this, args);
  }
  const callback = args.find(arg => typeof arg === 'function');
  const listenOnHandle = () => listen.call(this, handle, callback);
  if (handle === undefined) waiting.push(listenOnHandle);
  else listenOnHandle();
  return this;
};
