import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { portalRoutes, toOpenApiPath } from './routes';
import { MAX_PAGE_LIMIT } from '@devportal/plugin-portal-common';
import { withGeneratedSchemas } from './__testUtils__/openapiSchemas';

const DOCUMENT_PATH = path.resolve(__dirname, '..', '..', 'openapi.yaml');

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string;
        parameters?: Array<{ $ref?: string; name?: string }>;
      }
    >
  >;
  components: {
    parameters: Record<string, { name: string; schema: object }>;
  };
}

function loadDocument(): OpenApiDocument {
  return yaml.load(fs.readFileSync(DOCUMENT_PATH, 'utf8')) as OpenApiDocument;
}

function documentedOperations(): string[] {
  const document = loadDocument();
  expect(document.openapi).toMatch(/^3\./);
  return Object.entries(document.paths).flatMap(([route, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => `${method.toUpperCase()} ${route} ${operation.operationId}`),
  );
}

const routedOperations = portalRoutes.map(
  route => `${route.method.toUpperCase()} ${toOpenApiPath(route.path)} ${route.operationId}`,
);

describe('openapi.yaml', () => {
  it('documents every route of the router, with its operationId', () => {
    expect(documentedOperations()).toEqual(expect.arrayContaining(routedOperations));
  });

  it('documents no operation that the router does not serve', () => {
    expect(routedOperations).toEqual(expect.arrayContaining(documentedOperations()));
  });

  it('matches the 23 endpoints of the specification (P§4, and revoke and the grant routes of mcp-access §4.4, §4.8)', () => {
    expect(new Set(routedOperations).size).toBe(23);
    expect(documentedOperations()).toHaveLength(23);
  });

  it("documents limit and continue on every list route, with the router's bounds", () => {
    const document = loadDocument();
    const lists = portalRoutes.filter(
      route => route.method === 'get' && route.operationId.startsWith('list'),
    );
    expect(lists).toHaveLength(8);
    for (const route of lists) {
      const operation = document.paths[toOpenApiPath(route.path)].get;
      const names = (operation.parameters ?? []).map(
        parameter =>
          parameter.name ?? document.components.parameters[parameter.$ref!.split('/').pop()!].name,
      );
      expect({ route: route.path, names }).toEqual({
        route: route.path,
        names: expect.arrayContaining(['limit', 'continue']),
      });
    }
    expect(document.components.parameters.limit.schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: MAX_PAGE_LIMIT,
    });
  });
});

/** Where the checked-in document first differs from the generated one, and the fix. */
function staleness(checkedIn: string, generated: string): string | undefined {
  if (checkedIn === generated) return undefined;
  const have = checkedIn.split('\n');
  const want = generated.split('\n');
  const line = have.findIndex((text, i) => text !== want[i]);
  const at = line === -1 ? have.length : line;
  return `openapi.yaml is stale from line ${at + 1} (it has ${JSON.stringify(have[at])}, the contract gives ${JSON.stringify(want[at])}): run \`yarn build:openapi\` in plugins/portal-backend and commit openapi.yaml`;
}

describe("openapi.yaml schemas (generated from the contract's zod schemas)", () => {
  const text = fs.readFileSync(DOCUMENT_PATH, 'utf8');

  it('are what yarn build:openapi generates from portalOperations', () => {
    const generated = withGeneratedSchemas(text);
    if (process.env.UPDATE_OPENAPI === '1') {
      fs.writeFileSync(DOCUMENT_PATH, generated);
      return;
    }
    expect(staleness(text, generated)).toBeUndefined();
  });

  it('drift in a body schema, a query parameter or a body reference is caught', () => {
    const bodyDrift = text.replace(
      /(CreateAPIKeyRequest:[\s\S]*?useCase: \{ type: string, maxLength: )1000/,
      '$12000',
    );
    expect(bodyDrift).not.toBe(text);
    expect(withGeneratedSchemas(bodyDrift)).not.toBe(bodyDrift);

    const queryDrift = text.replace("        - $ref: '#/components/parameters/status'\n", '');
    expect(queryDrift).not.toBe(text);
    expect(() => withGeneratedSchemas(queryDrift)).toThrow(
      'openapi.yaml: listRequests documents query parameters [continue, limit, namespace, owner, product, requester] but the router reads [continue, limit, namespace, owner, product, requester, status]',
    );

    const wrongBody = text.replace(
      /(operationId: createRequest[\s\S]*?schema: \{ \$ref: '#\/components\/schemas\/)CreateAPIKeyRequest/,
      '$1Review',
    );
    expect(wrongBody).not.toBe(text);
    expect(() => withGeneratedSchemas(wrongBody)).toThrow(
      /createRequest and approveRequest both reference Review|approveRequest and createRequest both reference Review/,
    );
  });

  it('drift in a response schema, a success status, an answer or an error body is caught', () => {
    const responseDrift = text.replace(
      /(APIKey:[\s\S]*?phase: \{ type: string, enum: \[Pending, Approved), Rejected\]/,
      '$1]',
    );
    expect(responseDrift).not.toBe(text);
    expect(withGeneratedSchemas(responseDrift)).not.toBe(responseDrift);

    const statusDrift = text.replace(/(operationId: createRequest[\s\S]*?)'201':/, "$1'200':");
    expect(statusDrift).not.toBe(text);
    expect(() => withGeneratedSchemas(statusDrift)).toThrow(
      'openapi.yaml: createRequest documents success [200] but the router answers 201',
    );

    const wrongAnswer = text.replace(
      /(operationId: getApiProduct[\s\S]*?schema: \{ \$ref: '#\/components\/schemas\/)APIProduct'/,
      "$1APIKey'",
    );
    expect(wrongAnswer).not.toBe(text);
    expect(() => withGeneratedSchemas(wrongAnswer)).toThrow(
      'openapi.yaml: the 200 answer of getApiProduct must be a $ref to #/components/schemas/APIProduct',
    );

    const wrongError = text.replace(
      /(NotFound:\n.*\n.*\n.*\n +schema: \{ \$ref: '#\/components\/schemas\/)Error'/,
      "$1ListMeta'",
    );
    expect(wrongError).not.toBe(text);
    expect(() => withGeneratedSchemas(wrongError)).toThrow(
      /the 404 answer of \w+ must be a \$ref to #\/components\/schemas\/Error/,
    );

    const stale = text.replace('  schemas:\n', '  schemas:\n    Leftover:\n      type: object\n');
    expect(stale).not.toBe(text);
    expect(() => withGeneratedSchemas(stale)).toThrow(
      'openapi.yaml: components.schemas.Leftover is neither a request body nor an answer of the contract',
    );
  });
});
