#!/usr/bin/env node
/*
 * The relay floor of bench/broker.mjs: a byte pipe from PORT on 127.0.0.1 to PIPE_TARGET (an
 * http:// URL; the request path is kept as the client sent it). It parses nothing: headers and
 * body bytes go through as they are, over a keep-alive agent towards the backend. What it costs
 * per call is what any relay in Node must pay for the extra hop (two HTTP exchanges instead of
 * one); whatever the broker costs beyond it is the broker's own work. Its own process, so that
 * its CPU time can be read from /proc. A failed upstream request ends the client's response.
 *
 *   PORT=8080 PIPE_TARGET=http://127.0.0.1:3001 node bench/pipeRelay.mjs
 */
import http from 'node:http';

const target = new URL(process.env.PIPE_TARGET);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

http
  .createServer((req, res) => {
    const headers = { ...req.headers, host: target.host };
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
        agent,
      },
      answer => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    // A client that goes away (e.g. closes its GET stream) ends the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
