/*
 * The admission chain on its own: its order (drain → authentication → access → limits), a
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
      served.push(`${request.method} ${JSON.stringify(request.route)}`);
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
  return { admission, request, entry, served, refusals };
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
});
