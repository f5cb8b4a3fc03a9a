/*
 * `Mcp-Param-{Name}` headers (MCP 2026-07-28, `spec/basic/transports/streamable-http.mdx`
 * §Custom Headers from Tool Parameters; docs/mcp-2026-07-28-notes.md §3a): a tool's
 * `inputSchema` may mark properties with `x-mcp-header: "{Name}"`, and every call over HTTP then
 * mirrors those argument values into headers, so that load balancers and WAFs can route on them
 * without reading the body.
 *
 * Three pure steps, no HTTP:
 *   - scanParamHeaders: the declarations of one tool, or why the tool definition is invalid
 *     (a client MUST then leave the tool out of its tools/list). Done once per tool when a list
 *     is loaded (AggregatedCatalog), never per call;
 *   - paramHeaderValues: the headers a client sends for a call's arguments (null or absent
 *     values, and values of a non-primitive kind, send no header);
 *   - checkParamHeaders: the server's check that the headers agree with the body (after
 *     decoding); a value in the body without its header, a malformed Base64 value or a different
 *     value is a -32020 header mismatch (HTTP 400). A header whose body value is null or absent is
 *     ignored ("server MUST NOT expect the header").
 * The rules follow the specification; where it leaves room (the type of an annotated property,
 * which keywords break static reachability, numeric comparison) they follow the official SDK v2
 * (`core-internal/src/shared/mcpParamHeaders.ts`) so that the broker and SDK peers agree.
 */
import { isPlainObject } from './jsonRpc';
import { ModernHeader } from './modernEra';
import {
  decodeMcpHeaderValue,
  encodeMcpHeaderValue,
  headerMismatch,
  type ModernRequestError,
} from './requestMetadata';

/** The schema extension property naming a mirrored parameter's header. */
export const X_MCP_HEADER = 'x-mcp-header';

/** One `x-mcp-header` annotation of a tool's `inputSchema`. */
export interface ParamHeaderDeclaration {
  /** The `x-mcp-header` value as declared (the `{Name}` of `Mcp-Param-{Name}`). */
  readonly name: string;
  /** The request header that carries it, lower case as Node presents it (`mcp-param-region`). */
  readonly header: string;
  /** The chain of `properties` keys from the schema root to the annotated property. */
  readonly path: readonly string[];
  readonly type: 'string' | 'integer' | 'boolean';
}

/** The outcome of {@link scanParamHeaders}. */
export type ParamHeaderScan =
  | { valid: true; declarations: readonly ParamHeaderDeclaration[] }
  | { valid: false; reason: string };

/** RFC 9110 §5.1 `token` (`1*tchar`): no spaces, control characters or delimiters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const PRIMITIVE_TYPES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean']);

/**
 * Keywords whose subschemas are not "statically reachable" (the chain may only consist of
 * `properties` keys): an annotation under any of them makes the tool definition invalid.
 */
const UNREACHABLE_KEYWORDS = [
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'dependencies',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
] as const;

/** Of those, the ones whose value maps names to subschemas. */
const NAMED_SUBSCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  'patternProperties',
  'dependentSchemas',
  'dependencies',
  '$defs',
  'definitions',
]);

const NO_DECLARATIONS: readonly ParamHeaderDeclaration[] = Object.freeze([]);

function pathText(path: readonly string[]): string {
  return path.length === 0 ? 'the schema root' : `property "${path.join('.')}"`;
}

/**
 * The `x-mcp-header` declarations of a tool's `inputSchema`, or the first constraint it breaks
 * (empty name, not an RFC 9110 token, not unique ignoring case, on a property whose `type` is not
 * string/integer/boolean, or not reachable through `properties` alone).
 */
export function scanParamHeaders(inputSchema: unknown): ParamHeaderScan {
  const declarations: ParamHeaderDeclaration[] = [];
  const seen = new Map<string, string>();

  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isPlainObject(node)) return undefined;
    if (Object.hasOwn(node, X_MCP_HEADER)) {
      if (!reachable || path.length === 0) {
        return (
          `${X_MCP_HEADER} on ${pathText(path)} is not reachable from the schema root through ` +
          '"properties" alone (not under items, additionalProperties, oneOf/anyOf/allOf/not, ' +
          'if/then/else or $defs)'
        );
      }
      const name = node[X_MCP_HEADER];
      if (typeof name !== 'string' || name === '') {
        return `${X_MCP_HEADER} on ${pathText(path)} must be a non-empty string`;
      }
      if (!TOKEN.test(name)) {
        return (
          `${X_MCP_HEADER} "${name.slice(0, 100)}" on ${pathText(path)} is not an HTTP ` +
          "field-name token (letters, digits and !#$%&'*+-.^_`|~ only)"
        );
      }
      const type = typeof node.type === 'string' ? node.type : undefined;
      if (type === undefined || !PRIMITIVE_TYPES.has(type)) {
        return (
          `${X_MCP_HEADER} "${name}" is on ${pathText(path)} of type ` +
          `${type ?? '(none)'}; only string, integer and boolean properties may be mirrored`
        );
      }
      const lower = name.toLowerCase();
      const earlier = seen.get(lower);
      if (earlier !== undefined) {
        return `${X_MCP_HEADER} "${name}" is declared twice (also as "${earlier}", ignoring case)`;
      }
      seen.set(lower, name);
      declarations.push({
        name,
        header: `${ModernHeader.paramPrefix}${lower}`,
        path: [...path],
        type: type as ParamHeaderDeclaration['type'],
      });
    }
    if (isPlainObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault !== undefined) return fault;
      }
    }
    for (const keyword of UNREACHABLE_KEYWORDS) {
      const sub = node[keyword];
      if (sub === undefined) continue;
      let branches: unknown[] = [sub];
      if (Array.isArray(sub)) branches = sub;
      else if (isPlainObject(sub) && NAMED_SUBSCHEMA_KEYWORDS.has(keyword)) {
        branches = Object.values(sub);
      }
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false);
        if (fault !== undefined) return fault;
      }
    }
    return undefined;
  };

  const fault = visit(inputSchema, [], true);
  if (fault !== undefined) return { valid: false, reason: fault };
  return { valid: true, declarations: declarations.length === 0 ? NO_DECLARATIONS : declarations };
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const key of path) {
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/**
 * A primitive argument as its header text: strings as they are, booleans `true`/`false`,
 * integers in decimal. Undefined for anything that cannot be mirrored faithfully (objects,
 * arrays, non-finite numbers, integers beyond ±(2^53−1)); the tool's own argument validation
 * answers those.
 */
function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) {
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? undefined : String(value);
  }
  return undefined;
}

/**
 * The `Mcp-Param-*` headers (lower-case names) a client sends with a call of a tool with these
 * declarations, values encoded as the specification says (plain ASCII as is, else
 * `=?base64?…?=`); a null or absent argument sends no header.
 */
export function paramHeaderValues(
  declarations: readonly ParamHeaderDeclaration[],
  args: unknown,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const declaration of declarations) {
    const text = primitiveText(valueAt(args, declaration.path));
    if (text !== undefined) headers[declaration.header] = encodeMcpHeaderValue(text);
  }
  return headers;
}

const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * The server's check of a call's `Mcp-Param-*` headers against its arguments: every argument
 * value with a declaration needs its header, decoding to the same value (integers compared as
 * numbers, so `42.0` matches 42). Returns the -32020 refusal for the first disagreement.
 */
export function checkParamHeaders(
  declarations: readonly ParamHeaderDeclaration[],
  args: unknown,
  headerOf: (lowerCaseName: string) => string | undefined,
): ModernRequestError | undefined {
  for (const declaration of declarations) {
    const bodyValue = valueAt(args, declaration.path);
    const bodyText = primitiveText(bodyValue);
    if (bodyText === undefined) continue;
    const shown = `Mcp-Param-${declaration.name}`;
    const argument = `arguments.${declaration.path.join('.')}`;
    const raw = headerOf(declaration.header);
    if (raw === undefined) {
      return headerMismatch(
        `the ${shown} header is required because ${argument} is set (the tool's inputSchema ` +
          `marks it with ${X_MCP_HEADER}); send its value (Base64-encoded as =?base64?…?= when ` +
          'it is not plain ASCII)',
        '(missing)',
        bodyText,
      );
    }
    const header = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    const decoded = decodeMcpHeaderValue(header);
    if (decoded === undefined) {
      return headerMismatch(
        `the ${shown} header has a malformed =?base64?…?= value; send Base64 of the UTF-8 text`,
        header,
        bodyText,
      );
    }
    const same =
      declaration.type === 'integer' && typeof bodyValue === 'number' && DECIMAL.test(decoded)
        ? Number(decoded) === bodyValue
        : decoded === bodyText;
    if (!same) {
      return headerMismatch(
        `${shown} header "${decoded.slice(0, 200)}" differs from ${argument} ` +
          `"${bodyText.slice(0, 200)}"; send the argument's value in the header`,
        header,
        bodyText,
      );
    }
  }
  return undefined;
}
