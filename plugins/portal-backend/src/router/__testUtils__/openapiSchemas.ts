/*
 * Generates the request side of openapi.yaml from the router's zod schemas (one source of
 * truth, issue #15): every request body component and every query parameter's schema is
 * written from operationInputs.ts; paths, responses and prose stay hand-written.
 *
 * The document names which component an operation's body uses (its `$ref`), so the
 * generator follows the document's own references and fails, naming the operation, when
 * the document and the router disagree: a body the router reads but the document does not
 * describe (or the reverse), query parameters that differ by name, or one component
 * referenced for two different schemas. `yarn build:openapi` rewrites the file; the OpenAPI
 * test fails while the checked-in file differs from what this produces.
 *
 * Used by the test and the script only (not part of the plugin at run time).
 */
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import type { z } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import { operationInputs } from '../operationInputs';
import { portalRoutes, toOpenApiPath } from '../routes';

type JsonSchema = Record<string, unknown>;

interface Operation {
  parameters?: Array<{ $ref?: string; name?: string; in?: string }>;
  requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
}

interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, { name: string; in: string }>;
  };
}

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

const nameOfRef = (ref: string) => ref.split('/').pop()!;

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
    const input: { body?: z.ZodTypeAny; query?: z.ZodTypeAny } = operationInputs[id];

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
    const shape: Record<string, z.ZodTypeAny> =
      input.query === undefined
        ? {}
        : (input.query as z.ZodEffects<z.AnyZodObject>).innerType().shape;
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
 * `text` (openapi.yaml) with its request body components and query parameter schemas
 * generated from the router's schemas. A component's own `description` is kept.
 */
export function withGeneratedRequestSchemas(text: string): string {
  const doc = parseDocument(text);
  const js = doc.toJS() as OpenApiDocument;
  const { bodies, parameters } = generatedRequestSchemas(js);
  for (const [name, { schema }] of bodies) {
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
    .toString({ lineWidth: 0, flowCollectionPadding: true })
    .replace(/\[ ([^[\]\n]*) \]/g, '[$1]');
}
