/*
 * Many broker client sessions over raw HTTP (an SDK client per session would cost the load
 * generator more than the broker): POST initialize, POST notifications/initialized, then a GET
 * event stream on its own TCP connection, held open. Each stream notes when its first
 * `notifications/tools/list_changed` arrives. DELETE ends a session (and its stream).
 */
import http from 'node:http';

const PROTOCOL_VERSION = '2025-11-25';

/** Small request helper: resolves { status, headers, body }. */
function request(agent, url, { method, headers, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, res => {
      const chunks = [];
      res.on('data', chunk => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `task(i)` for i in [0, n) with at most `concurrency` at a time. */
async function pool(n, concurrency, task) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next;
      next += 1;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, worker));
}

/**
 * A set of raw sessions against the broker at `url` with a Backstage `token`.
 * `open(n)` creates n sessions with open GET streams; `closeAll()` DELETEs them.
 */
export class RawSessionSet {
  constructor(url, token) {
    this.url = url;
    this.auth = `Bearer ${token}`;
    // POSTs and DELETEs share a pool of keep-alive connections; every GET gets its own.
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    this.sessions = [];
  }

  async open(n, concurrency = 32) {
    const created = new Array(n);
    await pool(n, concurrency, async i => {
      created[i] = await this.openOne();
    });
    this.sessions.push(...created);
    return created;
  }

  async openOne() {
    const headers = {
      Authorization: this.auth,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    const init = await request(this.agent, this.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'raw-bench', version: '1' },
        },
      }),
    });
    const id = init.headers['mcp-session-id'];
    if (init.status !== 200 || !id)
      throw new Error(`initialize answered ${init.status}: ${init.body.slice(0, 200)}`);
    const sessionHeaders = {
      ...headers,
      'Mcp-Session-Id': id,
      'MCP-Protocol-Version': PROTOCOL_VERSION,
    };
    const ack = await request(this.agent, this.url, {
      method: 'POST',
      headers: sessionHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    if (ack.status !== 202) throw new Error(`notifications/initialized answered ${ack.status}`);
    const session = { id, headers: sessionHeaders, receivedAt: undefined, stream: undefined };
    await new Promise((resolve, reject) => {
      const req = http.request(this.url, {
        method: 'GET',
        agent: false,
        headers: {
          Authorization: this.auth,
          Accept: 'text/event-stream',
          'Mcp-Session-Id': id,
          'MCP-Protocol-Version': PROTOCOL_VERSION,
        },
      });
      req.on('response', res => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET stream answered ${res.statusCode}`));
          res.resume();
          return;
        }
        res.setEncoding('utf8');
        res.on('data', chunk => {
          if (
            session.receivedAt === undefined &&
            chunk.includes('notifications/tools/list_changed')
          ) {
            session.receivedAt = performance.now();
          }
        });
        res.on('error', () => {});
        session.stream = res;
        resolve();
      });
      req.on('error', reject);
      req.end();
    });
    return session;
  }

  /** Forgets what every stream received (before the next notification). */
  resetReceipts() {
    for (const session of this.sessions) session.receivedAt = undefined;
  }

  /** Waits until every stream received a list_changed or `timeoutMs` passes; returns the count. */
  async waitForAll(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const received = this.sessions.filter(s => s.receivedAt !== undefined).length;
      if (received === this.sessions.length || Date.now() > deadline) return received;
      await new Promise(resolve => setTimeout(resolve, 5));
    }
  }

  /** DELETEs every session; returns how many answered 204. */
  async closeAll(concurrency = 32) {
    let ok = 0;
    const sessions = this.sessions;
    this.sessions = [];
    await pool(sessions.length, concurrency, async i => {
      const session = sessions[i];
      const res = await request(this.agent, this.url, {
        method: 'DELETE',
        headers: session.headers,
      });
      if (res.status === 204) ok += 1;
      session.stream?.destroy();
    });
    return ok;
  }

  destroy() {
    for (const session of this.sessions) session.stream?.destroy();
    this.agent.destroy();
  }
}
