/*
 * The admission chain on its own: its order (era checks → drain → authentication → access →
 * limits), a session's GET and DELETE through the same chain, a
 * `limits` step that answers a request (the hook per-person rate limits and per-server
 * credentials use), and the session's count of running requests, balanced however the chain
 * ends.
 */
import { Admission, type AdmissionStep } from './admission';
import type { MethodEntry } from './methodTable';
import type { McpRequest } from './mcpRequest';
import type { PrincipalAccessDeps } from './principalAccess';

const SESSION = { id: 'session-1', openRequests: 0 };

function setUp(options: { draining?: boolean; limits?: AdmissionStep[] } = {}) {
  const served: string[] = [];
  const refusals: Array<{ status: number; message: string }> = [];
  const catalog = { routeTool: (name: string) => ({ backend: 'b', name }) };
  const deps = {
    broker: {
      draining: options.draining ?? false,
      catalog: () => ({}),
      logger: { warn: () => undefined },
      sessions: {
        get: async (id: string) => (id === SESSION.id ? SESSION : undefined),
        requestStarted: (session: typeof SESSION) => {
          session.openRequests += 1;
        },
        requestEnded: (session: typeof SESSION) => {
          session.openRequests -= 1;
        },
      },
    },
    access: {
      forCredential: async () => ({ mayCreateSession: true, mayReadStatus: false, catalog }),
    },
    httpAuth: {},
  } as unknown as PrincipalAccessDeps;
  const admission = new Admission(
    deps,
    async request => {
      served.push(
        request.method === undefined
          ? `${request.message.kind} ${request.session?.id}`
          : `${request.method} ${JSON.stringify(request.route)}`,
      );
    },
    options.limits,
  );
  const request = (sessionId: string | undefined): McpRequest => {
    const res = {
      locals: { mcpBrokerPrincipal: 'user:default/alice' },
      setHeader: () => undefined,
    };
    return {
      era: 'legacy',
      principal: 'user:default/alice',
      message: {
        kind: 'request',
        message: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo' } },
      },
      method: 'tools/call',
      id: 1,
      params: { name: 'echo' },
      req: { headers: sessionId === undefined ? {} : { 'mcp-session-id': sessionId } },
      writer: {
        res,
        refuse: (status: number, _code: number, message: string) =>
          refusals.push({ status, message }),
      },
    } as unknown as McpRequest;
  };
  const entry = {
    eras: ['legacy'],
    handler: async () => undefined,
    route: (c: typeof catalog, params: { name: string }) => c.routeTool(params.name),
  } as unknown as MethodEntry;
  /** A GET (`open-stream`) or DELETE (`end-session`) of the session `sessionId` names. */
  const operation = (
    kind: 'open-stream' | 'end-session',
    sessionId: string | undefined,
    headers: Record<string, string> = {},
  ): McpRequest => {
    const base = request(sessionId);
    return {
      ...base,
      message: { kind },
      method: undefined,
      id: null,
      params: {},
      req: {
        method: kind === 'open-stream' ? 'GET' : 'DELETE',
        headers: { ...base.req.headers, ...headers },
      },
    } as unknown as McpRequest;
  };
  return { admission, request, operation, entry, served, refusals };
}

describe('Admission', () => {
  afterEach(() => {
    SESSION.openRequests = 0;
  });

  it('admits a session’s request with its session, access and route, counting it while it runs', async () => {
    const { admission, request, entry, served } = setUp();
    let runningDuringServe = -1;
    const admitted = request(SESSION.id);
    await admission.run(admitted, {
      ...entry,
      route: (catalog, params, routed) => {
        runningDuringServe = SESSION.openRequests;
        return entry.route!(catalog, params, routed);
      },
    });
    expect(served).toEqual(['tools/call {"backend":"b","name":"echo"}']);
    expect(admitted.session).toBe(SESSION);
    expect(admitted.access?.mayCreateSession).toBe(true);
    expect(runningDuringServe).toBe(1);
    expect(SESSION.openRequests).toBe(0);
  });

  it('refuses while draining before anything else (no session is looked up)', async () => {
    const { admission, request, entry, served, refusals } = setUp({ draining: true });
    await admission.run(request('unknown-session'), entry);
    expect(refusals).toEqual([expect.objectContaining({ status: 503 })]);
    expect(served).toEqual([]);
  });

  it('refuses a session-era request without a session (400) or with an unknown one (404)', async () => {
    const { admission, request, entry, served, refusals } = setUp();
    await admission.run(request(undefined), entry);
    await admission.run(request('unknown-session'), entry);
    expect(refusals.map(r => r.status)).toEqual([400, 404]);
    expect(served).toEqual([]);
  });

  it('runs the limits steps after access, in order; one that answers ends the request', async () => {
    const seen: string[] = [];
    const limits: AdmissionStep[] = [
      request => {
        seen.push(`first: ${request.route?.name}, ${request.access !== undefined}`);
        return true;
      },
      async request => {
        seen.push('second');
        request.writer.refuse(429, -32000, 'Too many calls; retry in 1 s', request.id);
        return false;
      },
      () => {
        seen.push('never');
        return true;
      },
    ];
    const { admission, request, entry, served, refusals } = setUp({ limits });
    await admission.run(request(SESSION.id), entry);
    expect(seen).toEqual(['first: echo, true', 'second']);
    expect(refusals).toEqual([{ status: 429, message: 'Too many calls; retry in 1 s' }]);
    expect(served).toEqual([]);
    // The session's request was counted and released although a step answered it.
    expect(SESSION.openRequests).toBe(0);
  });

  it('serves a session’s GET and DELETE through the same chain: bound to the session, no permission asked, counted while they run', async () => {
    const { admission, operation, served, refusals } = setUp();
    const asked: string[] = [];
    const counted: number[] = [];
    const limits: AdmissionStep[] = [
      request => {
        asked.push(`${request.message.kind}: access ${request.access !== undefined}`);
        counted.push(SESSION.openRequests);
        return true;
      },
    ];
    const chained = setUp({ limits });
    await chained.admission.run(operation('open-stream', SESSION.id), undefined);
    await chained.admission.run(operation('end-session', SESSION.id), undefined);
    expect(chained.served).toEqual(['open-stream session-1', 'end-session session-1']);
    expect(asked).toEqual(['open-stream: access false', 'end-session: access false']);
    expect(counted).toEqual([1, 1]);
    expect(SESSION.openRequests).toBe(0);
    // Without a session, or with an unknown one: 400 and 404, as for a session's POST.
    await admission.run(operation('open-stream', undefined), undefined);
    await admission.run(operation('end-session', 'unknown-session'), undefined);
    expect(refusals.map(r => r.status)).toEqual([400, 404]);
    expect(served).toEqual([]);
  });

  it('refuses a new event stream while draining, but lets a session end', async () => {
    const { admission, operation, served, refusals } = setUp({ draining: true });
    await admission.run(operation('open-stream', SESSION.id), undefined);
    await admission.run(operation('end-session', SESSION.id), undefined);
    expect(refusals).toEqual([expect.objectContaining({ status: 503 })]);
    expect(served).toEqual(['end-session session-1']);
  });

  it('refuses a GET or DELETE of a 2026-07-28 client without a session with 405 before anything else', async () => {
    const { admission, operation, served, refusals } = setUp({ draining: true });
    const modern = { 'mcp-protocol-version': '2026-07-28' };
    await admission.run(operation('open-stream', undefined, modern), undefined);
    await admission.run(operation('end-session', undefined, modern), undefined);
    expect(refusals.map(r => r.status)).toEqual([405, 405]);
    expect(served).toEqual([]);
  });
});
