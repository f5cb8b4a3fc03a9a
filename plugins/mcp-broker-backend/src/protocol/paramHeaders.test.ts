import { JsonRpcErrorCode } from './jsonRpc';
import { checkParamHeaders, paramHeaderValues, scanParamHeaders } from './paramHeaders';

const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

function declarationsOf(inputSchema: unknown) {
  const scan = scanParamHeaders(inputSchema);
  if (!scan.valid) throw new Error(`expected a valid schema: ${scan.reason}`);
  return scan.declarations;
}

function reasonOf(inputSchema: unknown): string {
  const scan = scanParamHeaders(inputSchema);
  if (scan.valid) throw new Error('expected an invalid schema');
  return scan.reason;
}

describe('scanParamHeaders', () => {
  it('finds annotations at any depth of "properties", with the header name in lower case', () => {
    const declarations = declarationsOf(
      schema({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        query: { type: 'string' },
        target: {
          type: 'object',
          properties: { shard: { type: 'integer', 'x-mcp-header': 'Shard-Id' } },
        },
      }),
    );
    expect(declarations).toEqual([
      { name: 'Region', header: 'mcp-param-region', path: ['region'], type: 'string' },
      {
        name: 'Shard-Id',
        header: 'mcp-param-shard-id',
        path: ['target', 'shard'],
        type: 'integer',
      },
    ]);
  });

  it('accepts schemas without annotations, and anything that is not a schema object', () => {
    expect(declarationsOf(schema({ a: { type: 'string' } }))).toEqual([]);
    expect(declarationsOf(undefined)).toEqual([]);
    // A property named like the keyword is a property, not an annotation.
    expect(declarationsOf(schema({ 'x-mcp-header': { type: 'string' } }))).toEqual([]);
  });

  it.each([
    ['an empty name', { type: 'string', 'x-mcp-header': '' }, /non-empty string/],
    ['a name that is not a string', { type: 'string', 'x-mcp-header': 7 }, /non-empty string/],
    ['a space', { type: 'string', 'x-mcp-header': 'My Region' }, /not an HTTP field-name token/],
    ['a colon', { type: 'string', 'x-mcp-header': 'Region:' }, /not an HTTP field-name token/],
    ['CR LF', { type: 'string', 'x-mcp-header': 'A\r\nX-Evil' }, /not an HTTP field-name token/],
    ['a number-typed property', { type: 'number', 'x-mcp-header': 'Ratio' }, /of type number/],
    ['an object property', { type: 'object', 'x-mcp-header': 'Obj' }, /of type object/],
    ['an untyped property', { 'x-mcp-header': 'Any' }, /of type \(none\)/],
  ])('rejects %s', (_what, property, reason) => {
    expect(reasonOf(schema({ p: property }))).toMatch(reason);
  });

  it('rejects names that are equal ignoring case', () => {
    expect(
      reasonOf(
        schema({
          a: { type: 'string', 'x-mcp-header': 'Region' },
          b: { type: 'string', 'x-mcp-header': 'REGION' },
        }),
      ),
    ).toMatch(/"REGION" is declared twice \(also as "Region"/);
  });

  it.each([
    ['items', schema({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'I' } } })],
    ['oneOf', schema({}, { oneOf: [schema({ a: { type: 'string', 'x-mcp-header': 'A' } })] })],
    ['$defs', schema({}, { $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } })],
    ['if', schema({}, { if: schema({ a: { type: 'string', 'x-mcp-header': 'A' } }) })],
    [
      'additionalProperties',
      schema({}, { additionalProperties: { type: 'string', 'x-mcp-header': 'X' } }),
    ],
    ['the root', { type: 'object', 'x-mcp-header': 'Root' }],
  ])('rejects an annotation under %s (not statically reachable)', (_where, inputSchema) => {
    expect(reasonOf(inputSchema)).toMatch(/not reachable from the schema root/);
  });
});

describe('paramHeaderValues', () => {
  const declarations = declarationsOf(
    schema({
      region: { type: 'string', 'x-mcp-header': 'Region' },
      count: { type: 'integer', 'x-mcp-header': 'Count' },
      dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
      nested: { type: 'object', properties: { id: { type: 'string', 'x-mcp-header': 'Id' } } },
    }),
  );

  // The specification's table (streamable-http.mdx §Value Encoding).
  it.each([
    ['us-west1', 'us-west1'],
    ['Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    [' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
    ['', '=?base64??='],
  ])('encodes %j as %s', (value, header) => {
    expect(paramHeaderValues(declarations, { region: value })).toEqual({
      'mcp-param-region': header,
    });
  });

  it('writes integers in decimal and booleans in lower case', () => {
    expect(
      paramHeaderValues(declarations, { count: -7, dry: false, nested: { id: 'n1' } }),
    ).toEqual({ 'mcp-param-count': '-7', 'mcp-param-dry-run': 'false', 'mcp-param-id': 'n1' });
  });

  it('omits the header for null, absent and non-primitive values', () => {
    expect(paramHeaderValues(declarations, { region: null, nested: 'not an object' })).toEqual({});
    expect(paramHeaderValues(declarations, undefined)).toEqual({});
    expect(paramHeaderValues(declarations, { region: { a: 1 }, count: 2 ** 53 })).toEqual({});
  });
});

describe('checkParamHeaders', () => {
  const declarations = declarationsOf(
    schema({
      region: { type: 'string', 'x-mcp-header': 'Region' },
      count: { type: 'integer', 'x-mcp-header': 'Count' },
    }),
  );
  const headers = (values: Record<string, string>) => (name: string) => values[name];

  it('accepts headers equal to the body after decoding, integers compared as numbers', () => {
    expect(
      checkParamHeaders(
        declarations,
        { region: 'Hello, 世界', count: 42 },
        headers({
          'mcp-param-region': '=?base64?SGVsbG8sIOS4lueVjA==?=',
          'mcp-param-count': '42.0',
        }),
      ),
    ).toBeUndefined();
  });

  it('does not expect a header for a null or absent value (and ignores one that is sent)', () => {
    expect(
      checkParamHeaders(declarations, { region: null }, headers({ 'mcp-param-region': 'x' })),
    ).toBeUndefined();
    expect(checkParamHeaders(declarations, {}, headers({}))).toBeUndefined();
  });

  it('refuses a body value without its header, naming the header and the argument', () => {
    expect(checkParamHeaders(declarations, { region: 'eu' }, headers({}))).toEqual({
      httpStatus: 400,
      code: JsonRpcErrorCode.HeaderMismatch,
      message: expect.stringMatching(
        /Mcp-Param-Region header is required because arguments\.region is set/,
      ),
      data: { mismatch: { header: '(missing)', body: 'eu' } },
    });
  });

  it('refuses a header that differs from the body', () => {
    const error = checkParamHeaders(
      declarations,
      { region: 'eu', count: 3 },
      headers({ 'mcp-param-region': 'eu', 'mcp-param-count': '4' }),
    );
    expect(error?.code).toBe(JsonRpcErrorCode.HeaderMismatch);
    expect(error?.message).toMatch(/Mcp-Param-Count header "4" differs from arguments\.count "3"/);
  });

  it('refuses a malformed Base64 value and an encoded value that differs', () => {
    expect(
      checkParamHeaders(
        declarations,
        { region: 'eu' },
        headers({ 'mcp-param-region': '=?base64?%%?=' }),
      )?.message,
    ).toMatch(/malformed =\?base64\?…\?= value/);
    expect(
      checkParamHeaders(
        declarations,
        { region: 'eu' },
        headers({ 'mcp-param-region': '=?base64?SGVsbG8sIOS4lueVjA==?=' }),
      )?.message,
    ).toMatch(/"Hello, 世界" differs from arguments\.region "eu"/);
  });

  it('compares strings exactly: a number-looking string header is not a number', () => {
    const strings = declarationsOf(schema({ v: { type: 'string', 'x-mcp-header': 'V' } }));
    expect(checkParamHeaders(strings, { v: '42' }, headers({ 'mcp-param-v': '42.0' }))?.code).toBe(
      JsonRpcErrorCode.HeaderMismatch,
    );
  });
});
