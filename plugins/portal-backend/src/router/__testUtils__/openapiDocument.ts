/*
 * openapi.yaml as the tests that hold the plugin and its client to it read it: the parsed
 * document, its local `$ref`s resolved, a JSON Schema validator (Ajv, with the document's
 * components beside each schema so `#/components/...` resolves, OpenAPI 3.0 `nullable`
 * included), and the operation a concrete request addresses.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import yaml from 'js-yaml';

type Json = Record<string, any>;

const DOCUMENT_PATH = path.resolve(__dirname, '..', '..', '..', 'openapi.yaml');

/** The parsed openapi.yaml. */
export const openApiDocument = yaml.load(fs.readFileSync(DOCUMENT_PATH, 'utf8')) as Json;

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

/** Follows a local `$ref` of the document (repeatedly). */
export function resolveRef(node: Json): Json {
  if (typeof node?.$ref !== 'string') return node;
  return resolveRef(
    node.$ref
      .slice(2)
      .split('/')
      .reduce((at: Json, part: string) => at[part], openApiDocument),
  );
}

/** The validation errors of `value` against a schema of the document (none: valid). */
export function schemaErrors(schema: Json, value: unknown): ErrorObject[] {
  const validate = ajv.compile({ ...schema, components: openApiDocument.components });
  return validate(value) ? [] : (validate.errors ?? []);
}

/** The documented operation that `method` on `pathname` (relative to the servers' URL) is. */
export function documentedOperationAt(
  method: string,
  pathname: string,
): { operationId: string; template: string; operation: Json; pathItem: Json } | undefined {
  const segments = pathname.split('/');
  // Literal paths first: `/requests/my` before `/requests/{namespace}`-like templates.
  const templates = Object.entries(openApiDocument.paths as Json).sort(
    ([a], [b]) => a.split('{').length - b.split('{').length,
  );
  for (const [template, pathItem] of templates) {
    const parts = template.split('/');
    const matches =
      parts.length === segments.length &&
      parts.every((part, i) => /^\{.+\}$/.test(part) || part === segments[i]);
    const operation = pathItem[method.toLowerCase()];
    if (matches && operation !== undefined) {
      return { operationId: operation.operationId, template, operation, pathItem };
    }
  }
  return undefined;
}
