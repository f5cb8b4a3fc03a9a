import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { portalRoutes, toOpenApiPath } from './routes';

const HTTP_METHODS = [
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
];

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string }>>;
}

function documentedOperations(): string[] {
  const document = yaml.load(
    fs.readFileSync(
      path.resolve(__dirname, '..', '..', 'openapi.yaml'),
      'utf8',
    ),
  ) as OpenApiDocument;
  expect(document.openapi).toMatch(/^3\./);
  return Object.entries(document.paths).flatMap(([route, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(
        ([method, operation]) =>
          `${method.toUpperCase()} ${route} ${operation.operationId}`,
      ),
  );
}

const routedOperations = portalRoutes.map(
  route =>
    `${route.method.toUpperCase()} ${toOpenApiPath(route.path)} ${route.operationId}`,
);

describe('openapi.yaml', () => {
  it('documents every route of the router, with its operationId', () => {
    expect(documentedOperations()).toEqual(
      expect.arrayContaining(routedOperations),
    );
  });

  it('documents no operation that the router does not serve', () => {
    expect(routedOperations).toEqual(
      expect.arrayContaining(documentedOperations()),
    );
  });

  it('matches the 20 endpoints of the specification', () => {
    expect(new Set(routedOperations).size).toBe(20);
    expect(documentedOperations()).toHaveLength(20);
  });
});
