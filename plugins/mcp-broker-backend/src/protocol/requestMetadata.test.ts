import { JsonRpcErrorCode } from './jsonRpc';
import { requestEra } from './modernEra';
import {
  decodeMcpHeaderValue,
  logLevelAllows,
  missingCapabilityError,
  missingClientCapabilities,
  requiredCapabilitiesForInputRequest,
  validateRequestMetadata,
} from './requestMetadata';
import { PROTOCOL_VERSIONS } from './versions';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'test-client', version: '1.0.0' },
};
const HEADERS = { protocolVersion: '2026-07-28', method: 'tools/call', name: 'echo' };
const callParams = (meta: Record<string, unknown> = META, name = 'echo') => ({
  name,
  arguments: {},
  _meta: meta,
});

function refusal(result: ReturnType<typeof validateRequestMetadata>) {
  if (result.ok) throw new Error('expected a refusal');
  return result.error;
}

describe('era selection', () => {
  it('serves a body carrying the protocol-version _meta key statelessly, valid or not', () => {
    expect(requestEra({ method: 'tools/list', params: { _meta: META } }, undefined)).toBe('modern');
    expect(
      requestEra(
        {
          method: 'tools/list',
          params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } },
        },
        '2025-11-25',
      ),
    ).toBe('modern');
  });

  it('keeps initialize, GET-less session traffic and bodies without the claim on the legacy path', () => {
    const init = { method: 'initialize', params: { protocolVersion: '2025-11-25' } };
    expect(requestEra(init, '2025-11-25')).toBe('legacy');
    expect(requestEra(init, undefined)).toBe('legacy');
    expect(requestEra({ method: 'tools/list' }, '2025-11-25')).toBe('legacy');
    expect(requestEra({ id: 1, result: {} }, '2026-07-28')).toBe('legacy');
    expect(requestEra([{ method: 'tools/list' }], '2026-07-28')).toBe('legacy');
    expect(requestEra('nonsense', undefined)).toBe('legacy');
  });

  it('sends a modern header without a claim to the modern validation (which names what is missing)', () => {
    expect(requestEra({ method: 'tools/list' }, '2026-07-28')).toBe('modern');
    expect(requestEra({ method: 'initialize', params: {} }, '2026-07-28')).toBe('modern');
  });

  it('does not change what legacy clients are offered', () => {
    expect(PROTOCOL_VERSIONS).toEqual(['2025-11-25', '2025-06-18', '2025-03-26']);
  });
});

describe('request metadata validation', () => {
  it('returns the version, capabilities and client info of a valid request', () => {
    expect(validateRequestMetadata('tools/call', callParams(), HEADERS)).toEqual({
      ok: true,
      context: {
        protocolVersion: '2026-07-28',
        clientCapabilities: { elicitation: {} },
        clientInfo: { name: 'test-client', version: '1.0.0' },
      },
    });
  });

  it('refuses a missing required _meta key with 400 / -32602 naming the key', () => {
    const error = refusal(
      validateRequestMetadata(
        'tools/list',
        { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
        { ...HEADERS, method: 'tools/list' },
      ),
    );
    expect(error).toMatchObject({
      httpStatus: 400,
      code: JsonRpcErrorCode.InvalidParams,
      data: { missing: ['io.modelcontextprotocol/clientCapabilities'] },
    });
    expect(error.message).toContain('io.modelcontextprotocol/clientCapabilities');
    const noMeta = refusal(validateRequestMetadata('tools/list', {}, HEADERS));
    expect(noMeta.code).toBe(JsonRpcErrorCode.InvalidParams);
    expect(noMeta.data).toEqual({
      missing: [
        'io.modelcontextprotocol/protocolVersion',
        'io.modelcontextprotocol/clientCapabilities',
      ],
    });
  });

  it('refuses a malformed clientInfo or logLevel with -32602', () => {
    for (const bad of [
      { 'io.modelcontextprotocol/clientInfo': { name: 'x' } },
      { 'io.modelcontextprotocol/logLevel': 'loud' },
      { 'io.modelcontextprotocol/clientCapabilities': [] },
    ]) {
      const error = refusal(
        validateRequestMetadata('tools/call', callParams({ ...META, ...bad }), HEADERS),
      );
      expect(error).toMatchObject({ httpStatus: 400, code: JsonRpcErrorCode.InvalidParams });
    }
  });

  it('refuses headers that disagree with the body with 400 / -32020', () => {
    const cases = [
      { ...HEADERS, protocolVersion: '2025-11-25' },
      { ...HEADERS, method: 'tools/list' },
      { ...HEADERS, name: 'other' },
      { ...HEADERS, name: '=?base64?not base64?=' },
    ];
    for (const headers of cases) {
      const error = refusal(validateRequestMetadata('tools/call', callParams(), headers));
      expect(error).toMatchObject({ httpStatus: 400, code: JsonRpcErrorCode.HeaderMismatch });
    }
  });

  it('refuses a missing standard header with -32020 saying which one to send', () => {
    const missing = [
      [{ method: 'tools/call', name: 'echo' }, 'MCP-Protocol-Version'],
      [{ protocolVersion: '2026-07-28', name: 'echo' }, 'Mcp-Method'],
      [{ protocolVersion: '2026-07-28', method: 'tools/call' }, 'Mcp-Name'],
    ] as const;
    for (const [headers, name] of missing) {
      const error = refusal(validateRequestMetadata('tools/call', callParams(), headers));
      expect(error.code).toBe(JsonRpcErrorCode.HeaderMismatch);
      expect(error.message).toContain(name);
    }
    // Mcp-Name is only required for the three methods that mirror a body member.
    expect(
      validateRequestMetadata(
        'tools/list',
        { _meta: META },
        { ...HEADERS, method: 'tools/list', name: undefined },
      ).ok,
    ).toBe(true);
  });

  it('compares a Base64-sentinel Mcp-Name after decoding it', () => {
    const name = 'héllo wörld';
    const header = `=?base64?${Buffer.from(name).toString('base64')}?=`;
    expect(
      validateRequestMetadata('tools/call', callParams(META, name), { ...HEADERS, name: header })
        .ok,
    ).toBe(true);
    expect(
      validateRequestMetadata(
        'resources/read',
        { uri: 'test://static-text', _meta: META },
        { ...HEADERS, method: 'resources/read', name: 'test://static-text' },
      ).ok,
    ).toBe(true);
  });

  it('refuses an unsupported version with 400 / -32022 listing every supported version', () => {
    const meta = { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    const error = refusal(
      validateRequestMetadata('tools/call', callParams(meta), {
        ...HEADERS,
        protocolVersion: '2099-01-01',
      }),
    );
    expect(error).toMatchObject({
      httpStatus: 400,
      code: JsonRpcErrorCode.UnsupportedProtocolVersion,
      data: {
        supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
        requested: '2099-01-01',
      },
    });
  });

  it('tells a client that put a session-era version in _meta to use the handshake instead', () => {
    const meta = { ...META, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' };
    const error = refusal(
      validateRequestMetadata('tools/call', callParams(meta), {
        ...HEADERS,
        protocolVersion: '2025-11-25',
      }),
    );
    expect(error.code).toBe(JsonRpcErrorCode.UnsupportedProtocolVersion);
    expect(error.message).toContain('initialize');
    expect(error.data).toMatchObject({ requested: '2025-11-25' });
  });

  it('answers the faults of a request in the SDK order: envelope, mismatch, version, headers', () => {
    const unsupported = { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    // Mismatch before unsupported version.
    expect(
      refusal(validateRequestMetadata('tools/call', callParams(unsupported), HEADERS)).code,
    ).toBe(JsonRpcErrorCode.HeaderMismatch);
    // Unsupported version before missing headers.
    expect(refusal(validateRequestMetadata('tools/call', callParams(unsupported), {})).code).toBe(
      JsonRpcErrorCode.UnsupportedProtocolVersion,
    );
    // Envelope before everything.
    expect(
      refusal(validateRequestMetadata('tools/call', { name: 'echo', _meta: {} }, {})).code,
    ).toBe(JsonRpcErrorCode.InvalidParams);
  });

  it('calls an initialize sent with a modern header a mismatch', () => {
    const error = refusal(
      validateRequestMetadata('initialize', { protocolVersion: '2025-11-25' }, HEADERS),
    );
    expect(error.code).toBe(JsonRpcErrorCode.HeaderMismatch);
    expect(error.message).toContain('initialize');
  });
});

describe('client capabilities', () => {
  it('finds what an input request needs that the request did not declare', () => {
    const form = requiredCapabilitiesForInputRequest('elicitation/create', { message: 'x' })!;
    expect(missingClientCapabilities(form, { elicitation: {} })).toBeUndefined();
    expect(missingClientCapabilities(form, { elicitation: { url: {} } })).toEqual({
      elicitation: { form: {} },
    });
    expect(missingClientCapabilities(form, {})).toEqual({ elicitation: { form: {} } });
    const url = requiredCapabilitiesForInputRequest('elicitation/create', { mode: 'url' })!;
    expect(missingClientCapabilities(url, { elicitation: {} })).toEqual({
      elicitation: { url: {} },
    });
    const sampling = requiredCapabilitiesForInputRequest('sampling/createMessage', { tools: [] })!;
    expect(missingClientCapabilities(sampling, { sampling: {} })).toEqual({
      sampling: { tools: {} },
    });
    expect(
      missingClientCapabilities(requiredCapabilitiesForInputRequest('roots/list', undefined)!, {
        roots: {},
      }),
    ).toBeUndefined();
    expect(requiredCapabilitiesForInputRequest('tools/call', undefined)).toBeUndefined();
  });

  it('builds the -32021 refusal with the missing capabilities in data', () => {
    const error = missingCapabilityError({ elicitation: { form: {} } }, 'the tool asks the user');
    expect(error).toEqual({
      httpStatus: 400,
      code: -32021,
      message: expect.stringContaining('elicitation.form'),
      data: { requiredCapabilities: { elicitation: { form: {} } } },
    });
  });
});

describe('header value decoding', () => {
  it('passes plain values through and decodes the Base64 sentinel', () => {
    expect(decodeMcpHeaderValue('us-west1')).toBe('us-west1');
    expect(decodeMcpHeaderValue('=?base64?SGVsbG8sIOS4lueVjA==?=')).toBe('Hello, 世界');
    expect(decodeMcpHeaderValue('=?base64?***?=')).toBeUndefined();
    expect(decodeMcpHeaderValue('=?base64?/w==?=')).toBeUndefined(); // not UTF-8
  });
});

describe('logLevelAllows', () => {
  it('lets no log message through without a requested level', () => {
    expect(logLevelAllows(undefined, 'emergency')).toBe(false);
  });

  it('lets messages of the requested severity and above through', () => {
    expect(logLevelAllows('warning', 'warning')).toBe(true);
    expect(logLevelAllows('warning', 'error')).toBe(true);
    expect(logLevelAllows('warning', 'info')).toBe(false);
    expect(logLevelAllows('debug', 'debug')).toBe(true);
  });

  it('lets a message of an unknown level through only to a client that wants everything', () => {
    expect(logLevelAllows('debug', 'verbose')).toBe(true);
    expect(logLevelAllows('info', 'verbose')).toBe(false);
  });
});
