/*
 * Generates the schemas of openapi.yaml from the contract's zod schemas (one source of truth,
 * `portalOperations` in @devportal/plugin-portal-common, issues #15 and #29): every request
 * body component and query parameter schema from what the router validates, and every
 * response component from what the operations answer. Paths, statuses and prose stay
 * hand-written, and are checked against the same table.
 *
 * The document names which component an operation's body and answer use (its `$ref`s), so the
 * generator follows the document's own references and fails, naming the operation, when the
 * document and the contract disagree: a body the router reads but the document does not
 * describe (or the reverse), query parameters that differ by name, one component referenced
 * for two different schemas, a success status or an answer other than the contract's, an error
 * answer that is not the error body, or a schema component nothing generates. `yarn
 * build:openapi` rewrites the file; the OpenAPI test fails while the checked-in file differs
 * from what this produces.
 *
 * Used by the test and the script only (not part of the plugin at run time).
 */
import {
  apiKeyListSchema,
  apiKeySchema,
  apiKeySecretSchema,
  apiKeySpecSchema,
  apiProductListSchema,
  apiProductSchema,
  apiProductSpecSchema,
  bulkReviewResponseSchema,
  bulkReviewResultSchema,
  errorResponseBodySchema,
  listMetadataSchema,
  mcpGrantListSchema,
  mcpGrantSchema,
  mcpToolCallLimitSchema,
  objectMetaSchema,
  planSchema,
  portalOperations,
  readOnlyObjectListSchema,
  readOnlyObjectSchema,
  targetRefSchema,
  type PortalOperation,
} from '@devportal/plugin-portal-common';
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import { z } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import { portalRoutes, toOpenApiPath } from '../routes';

type JsonSchema = Record<string, unknown>;

interface Response {
  $ref?: string;
  content?: Record<string, { schema?: JsonSchema }>;
}

interface Operation {
  parameters?: Array<{ $ref?: string; name?: string; in?: string }>;
  requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
  responses?: Record<string, Response>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, { name: string; in: string }>;
    responses?: Record<string, Response>;
  };
}

/**
 * The document's components for what the portal answers, by name. Every schema the
 * operations answer with is one of them, and so is every record inside those answers: the
 * generator writes each as a component and refers to the others by `$ref`.
 */
export const RESPONSE_COMPONENTS: Record<string, z.ZodTypeAny> = {
  ListMeta: listMetadataSchema,
  Error: errorResponseBodySchema,
  ObjectMeta: objectMetaSchema,
  KubeObject: readOnlyObjectSchema,
  KubeObjectList: readOnlyObjectListSchema,
  TargetRef: targetRefSchema,
  APIProductSpec: apiProductSpecSchema,
  Plan: planSchema,
  APIProduct: apiProductSchema,
  APIProductList: apiProductListSchema,
  APIKeySpec: apiKeySpecSchema,
  APIKey: apiKeySchema,
  APIKeyList: apiKeyListSchema,
  APIKeySecret: apiKeySecretSchema,
  BulkResult: bulkReviewResultSchema,
  BulkResults: bulkReviewResponseSchema,
  MCPToolCallLimit: mcpToolCallLimitSchema,
  MCPGrant: mcpGrantSchema,
  MCPGrantList: mcpGrantListSchema,
};

const COMPONENT_REF = /^#\/components\/schemas\/([^/]+)$/;

/**
 * The OpenAPI 3.0 schema of a zod schema, as the router sees its input: preprocessing
 * (empty query values) is skipped, a pipe is described by what it produces, and an
 * optional value is described by its type (optionality is the parameter's `required`).
 */
export function jsonSchemaOf(schema: z.ZodTypeAny): JsonSchema {
  const json = zodToJsonSchema(schema, {
    target: 'openApi3',
    $refStrategy: 'none',
    effectStrategy: 'input',
    pipeStrategy: 'output',
  }) as JsonSchema;
  const anyOf = json.anyOf as JsonSchema[] | undefined;
  if (anyOf?.length === 2 && Object.keys(anyOf[0]).join() === 'not') {
    return anyOf[1];
  }
  return json;
}

/**
 * The OpenAPI 3.0 schemas of {@link RESPONSE_COMPONENTS}, by name: the components inside one
 * are `$ref`s, and an object that is not `.strict()` admits more properties (a newer server
 * may add some).
 */
function responseSchemas(): Map<string, JsonSchema> {
  const { schemas } = zodToJsonSchema(z.never(), {
    target: 'openApi3',
    $refStrategy: 'root',
    basePath: ['#', 'components'],
    definitionPath: 'schemas',
    definitions: RESPONSE_COMPONENTS,
    removeAdditionalStrategy: 'strict',
    allowedAdditionalProperties: undefined,
  }) as { schemas: Record<string, JsonSchema> };
  // zod-to-json-schema refers to a repeated unnamed schema by its path inside the first use;
  // such a `$ref` would point into another component. Name it, or build it with a function.
  for (const [name, schema] of Object.entries(schemas)) {
    for (const ref of JSON.stringify(schema).match(/"\$ref":"[^"]*"/g) ?? []) {
      if (!COMPONENT_REF.test(JSON.parse(`{${ref}}`).$ref)) {
        throw new Error(
          `openapi.yaml: component ${name} uses a zod schema instance that appears elsewhere too (${ref}); add it to RESPONSE_COMPONENTS or build each use with a function`,
        );
      }
    }
  }
  return new Map(Object.entries(schemas));
}

const nameOfRef = (ref: string) => ref.split('/').pop()!;
const nameOfSchema = (schema: z.ZodTypeAny | undefined) =>
  Object.entries(RESPONSE_COMPONENTS).find(([, component]) => component === schema)?.[0];

/** Records `schema` under `name`, refusing a second, different schema for the same name. */
function assign(
  into: Map<string, { schema: JsonSchema; by: string }>,
  name: string,
  schema: JsonSchema,
  by: string,
) {
  const earlier = into.get(name);
  if (earlier && JSON.stringify(earlier.schema) !== JSON.stringify(schema)) {
    throw new Error(
      `openapi.yaml: ${by} and ${earlier.by} both reference ${name}, but the router validates them differently; give each its own component`,
    );
  }
  into.set(name, { schema, by: earlier?.by ?? by });
}

/** The generated request schemas, by component name, checked against the document. */
export function generatedRequestSchemas(document: OpenApiDocument) {
  const bodies = new Map<string, { schema: JsonSchema; by: string }>();
  const parameters = new Map<string, { schema: JsonSchema; by: string }>();
  for (const route of portalRoutes) {
    const id = route.operationId;
    const operation = document.paths[toOpenApiPath(route.path)]?.[route.method];
    if (!operation) throw new Error(`openapi.yaml: ${id} is not documented`);
    const input: PortalOperation = portalOperations[id];

    const content = Object.entries(operation.requestBody?.content ?? {});
    if (input.body === undefined && content.length > 0) {
      throw new Error(`openapi.yaml: ${id} documents a request body the router does not read`);
    }
    if (input.body !== undefined) {
      if (!content.some(([type]) => type === 'application/json')) {
        throw new Error(`openapi.yaml: ${id} must document its application/json request body`);
      }
      for (const [type, { schema }] of content) {
        if (schema?.$ref === undefined) {
          throw new Error(
            `openapi.yaml: the ${type} body of ${id} must be a $ref to components.schemas (it is generated)`,
          );
        }
        assign(bodies, nameOfRef(schema.$ref), jsonSchemaOf(input.body), id);
      }
    }

    const documented = (operation.parameters ?? []).flatMap(parameter => {
      if (parameter.$ref === undefined) {
        if (parameter.in === 'query') {
          throw new Error(
            `openapi.yaml: query parameter ${parameter.name} of ${id} must be a $ref to components.parameters (its schema is generated)`,
          );
        }
        return [];
      }
      const component = nameOfRef(parameter.$ref);
      const resolved = document.components.parameters[component];
      return resolved.in === 'query' ? [{ component, name: resolved.name }] : [];
    });
    const shape = queryShape(input.query);
    const routed = Object.keys(shape).sort();
    const names = documented.map(p => p.name).sort();
    if (routed.join() !== names.join()) {
      throw new Error(
        `openapi.yaml: ${id} documents query parameters [${names.join(', ')}] but the router reads [${routed.join(', ')}]`,
      );
    }
    for (const { component, name } of documented) {
      assign(parameters, component, jsonSchemaOf(shape[name]), id);
    }
  }
  return { bodies, parameters };
}

/**
 * Checks every documented answer against the contract: the one success status is the
 * operation's, its body is a `$ref` to the component of the schema the operation answers
 * with (none for a 204), and every error answer carries the `Error` component.
 */
export function checkDocumentedResponses(document: OpenApiDocument) {
  const resolve = (response: Response): Response =>
    response.$ref === undefined
      ? response
      : resolve(document.components.responses?.[nameOfRef(response.$ref)] ?? {});
  for (const route of portalRoutes) {
    const id = route.operationId;
    const operation = document.paths[toOpenApiPath(route.path)]?.[route.method];
    if (!operation) throw new Error(`openapi.yaml: ${id} is not documented`);
    const contract: PortalOperation = portalOperations[id];
    const responses = Object.entries(operation.responses ?? {});
    const successes = responses.filter(([status]) => status.startsWith('2'));
    if (successes.map(([status]) => status).join() !== String(contract.status)) {
      throw new Error(
        `openapi.yaml: ${id} documents success [${successes.map(([s]) => s).join(', ')}] but the router answers ${contract.status}`,
      );
    }
    for (const [status, response] of responses) {
      const schema = resolve(response).content?.['application/json']?.schema;
      const documented =
        typeof schema?.$ref === 'string' && COMPONENT_REF.test(schema.$ref)
          ? nameOfRef(schema.$ref)
          : undefined;
      const expected = status.startsWith('2') ? nameOfSchema(contract.response) : 'Error';
      if (status.startsWith('2') && contract.response !== undefined && expected === undefined) {
        throw new Error(
          `openapi.yaml: ${id} answers a schema that is not in RESPONSE_COMPONENTS; name it there`,
        );
      }
      if (documented !== expected || (schema !== undefined && Object.keys(schema).length !== 1)) {
        throw new Error(
          `openapi.yaml: the ${status} answer of ${id} must be ${
            expected === undefined ? 'without a body' : `a $ref to #/components/schemas/${expected}`
          } (it is generated from the contract)`,
        );
      }
    }
  }
}

/**
 * Puts a generated node's small collections on one line, as in the hand-written parts: a
 * list of scalars, and a map whose values are scalars or such lists.
 */
function compact<T extends Node>(node: T): T {
  const oneLine = (value: unknown) => isScalar(value) || (isSeq(value) && value.flow === true);
  if (isSeq(node)) {
    node.items.forEach(item => compact(item as Node));
    node.flow = node.items.every(item => isScalar(item));
  } else if (isMap(node)) {
    node.items.forEach(pair => compact(pair.value as Node));
    node.flow = node.items.every(pair => oneLine(pair.value));
  }
  return node;
}

/**
 * `text` (openapi.yaml) with its request body components, query parameter schemas and
 * response components generated from the contract. A component's own `description` is kept
 * unless its zod schema has one.
 */
export function withGeneratedSchemas(text: string): string {
  const doc = parseDocument(text);
  const js = doc.toJS() as OpenApiDocument;
  const { bodies, parameters } = generatedRequestSchemas(js);
  checkDocumentedResponses(js);
  const components = new Map([
    ...[...bodies].map(([name, { schema }]) => [name, schema] as const),
    ...responseSchemas(),
  ]);
  for (const name of Object.keys(js.components.schemas)) {
    if (!components.has(name)) {
      throw new Error(
        `openapi.yaml: components.schemas.${name} is neither a request body nor an answer of the contract; remove it, or add its schema to RESPONSE_COMPONENTS`,
      );
    }
  }
  for (const [name, schema] of components) {
    const description = js.components.schemas[name]?.description;
    doc.setIn(
      ['components', 'schemas', name],
      compact(
        doc.createNode({
          ...(description !== undefined && { description }),
          ...schema,
        }),
      ),
    );
  }
  for (const [name, { schema }] of parameters) {
    doc.setIn(['components', 'parameters', name, 'schema'], compact(doc.createNode(schema)));
  }
  // The file's style: `{ padded: maps }` and `[unpadded, lists]` (yaml pads both or none).
  return doc
    .toString({ lineWidth: 0, flowCollectionPadding: true, singleQuote: true })
    .replace(/\[ ([^[\]\n]*) \]/g, '[$1]');
}

/** The fields of a query schema: an object, or one refined (inside one layer of effects). */
function queryShape(query: z.ZodTypeAny | undefined): Record<string, z.ZodTypeAny> {
  if (query === undefined) return {};
  const object = query instanceof z.ZodEffects ? query.innerType() : query;
  return (object as z.AnyZodObject).shape;
}
