/*
 * Maps a broker server's description (`GET /api/mcp-broker/servers`) onto a catalog entity of
 * kind API, `spec.type: mcp-server` (contract mcp-access §2.3–§2.5). Pure functions, no I/O.
 *
 * Guarantees: the entity name is valid and unique per server (`mcp-server-<name>`, or a prefix
 * plus a hash when over 63 characters); the owner is the broker's, else the configured default;
 * the definition is JSON that always parses and never exceeds its size cap (schemas are left out
 * first, then the lists are cut); no URL, header or identity setting of the backend enters the
 * entity (the description carries none, and only named members are copied).
 */
import { createHash } from 'node:crypto';
import type { ApiEntity } from '@backstage/catalog-model';
import {
  MCP_ENDPOINT_ANNOTATION,
  MCP_SERVER_ANNOTATION,
  MCP_SOURCE_ANNOTATION,
  type McpServerDescription,
  type McpServerKind,
} from '@devportal/plugin-mcp-broker-common';

/** The longest entity name the catalog accepts. */
const MAX_NAME_LENGTH = 63;
/** Hex digits of the hash that keeps truncated names unique (40 bits). */
const NAME_HASH_LENGTH = 10;
/** The largest definition, in bytes of UTF-8 (contract §2.5). @public */
export const MAX_DEFINITION_BYTES = 256 * 1024;
/** The longest description copied from the broker. */
const MAX_DESCRIPTION_LENGTH = 1000;

/** How the entities link to the tools page and the broker. @public */
export interface ServerEntityOptions {
  /**
   * The MCP tools page of a server; `{name}` is replaced by the URL-encoded server name
   * (endpoints use the same template with `?endpoint=` in place of `?server=`).
   */
  toolsPageUrlTemplate: string;
  /** Where an IDE connects: the broker's MCP endpoint, `<broker base URL>/mcp`. */
  mcpEndpointUrl: string;
  /** The owner of servers the broker names none for (an entity ref). */
  defaultOwner: string;
  /** The location the entities are managed by, e.g. `mcp-broker:<broker base URL>`. */
  location: string;
}

/**
 * The catalog entity name of a server or endpoint: `mcp-server-<name>` / `mcp-endpoint-<name>`,
 * or, over 63 characters, its first 52 characters (trailing `-` removed), `-` and 10 hex digits
 * of the SHA-256 of `<kind>/<name>` (the rule of the portal's `apiEntityName`).
 *
 * @public
 */
export function mcpEntityName(ref: { kind: McpServerKind; name: string }): string {
  const name = `mcp-${ref.kind}-${ref.name}`;
  if (name.length <= MAX_NAME_LENGTH) return name;
  const hash = createHash('sha256')
    .update(`${ref.kind}/${ref.name}`)
    .digest('hex')
    .slice(0, NAME_HASH_LENGTH);
  const prefix = name.slice(0, MAX_NAME_LENGTH - NAME_HASH_LENGTH - 1).replace(/-+$/, '');
  return `${prefix}-${hash}`;
}

/** The value of the source annotation: `config` or `kubernetes:<namespace>/<name>`. */
function sourceOf(description: McpServerDescription): string {
  const { source } = description;
  return source.type === 'kubernetes' ? `kubernetes:${source.namespace}/${source.name}` : 'config';
}

/**
 * The definition document of §2.5: pretty-printed JSON, keys in the contract's order. Over
 * {@link MAX_DEFINITION_BYTES} the schemas are left out (`schemasOmitted`); over it again the
 * lists are cut (`truncated`).
 *
 * @public
 */
export function serverDefinition(description: McpServerDescription): string {
  const document = {
    server: description.server,
    kind: description.kind,
    toolPrefix: description.toolPrefix,
    tools: description.tools,
    prompts: description.prompts,
    resources: description.resources,
    resourceTemplates: description.resourceTemplates,
    ...(description.listedAt === undefined ? {} : { listedAt: description.listedAt }),
  };
  const fits = (value: unknown) => {
    const text = JSON.stringify(value, null, 2);
    return Buffer.byteLength(text, 'utf8') <= MAX_DEFINITION_BYTES ? text : undefined;
  };
  const whole = fits(document);
  if (whole !== undefined) return whole;
  const withoutSchemas = {
    ...document,
    tools: document.tools.map(({ inputSchema: _in, outputSchema: _out, ...tool }) => tool),
    schemasOmitted: true,
  };
  const lean = fits(withoutSchemas);
  if (lean !== undefined) return lean;
  // Halve the lists until the document fits; an empty list always does.
  let keep = Math.max(
    withoutSchemas.tools.length,
    withoutSchemas.prompts.length,
    withoutSchemas.resources.length,
    withoutSchemas.resourceTemplates.length,
  );
  for (;;) {
    keep = Math.floor(keep / 2);
    const cut = fits({
      ...withoutSchemas,
      tools: withoutSchemas.tools.slice(0, keep),
      prompts: withoutSchemas.prompts.slice(0, keep),
      resources: withoutSchemas.resources.slice(0, keep),
      resourceTemplates: withoutSchemas.resourceTemplates.slice(0, keep),
      truncated: true,
    });
    if (cut !== undefined) return cut;
  }
}

/**
 * The API entity of a broker server (contract §2.5).
 *
 * @public
 */
export function serverToEntity(
  description: McpServerDescription,
  options: ServerEntityOptions,
): ApiEntity {
  const { server: name, kind } = description;
  const query = kind === 'endpoint' ? 'endpoint' : 'server';
  const toolsPageUrl = options.toolsPageUrlTemplate
    .replace(/([?&])server=/, `$1${query}=`)
    .replace(/\{name\}/g, encodeURIComponent(name));
  const title = description.title ?? name;
  const text =
    description.description === undefined
      ? `MCP ${kind} ${name} behind the MCP broker`
      : description.description.slice(0, MAX_DESCRIPTION_LENGTH);
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'API',
    metadata: {
      namespace: 'default',
      name: mcpEntityName({ kind, name }),
      title,
      description: text,
      tags: ['mcp'],
      links: [
        { url: toolsPageUrl, title: 'MCP tools', type: 'mcp-tools' },
        {
          url: options.mcpEndpointUrl,
          title: 'MCP endpoint (connect your IDE)',
          type: 'mcp-endpoint',
        },
      ],
      annotations: {
        [kind === 'endpoint' ? MCP_ENDPOINT_ANNOTATION : MCP_SERVER_ANNOTATION]: name,
        [MCP_SOURCE_ANNOTATION]: sourceOf(description),
        'backstage.io/managed-by-location': options.location,
        'backstage.io/managed-by-origin-location': options.location,
      },
    },
    spec: {
      type: 'mcp-server',
      lifecycle: 'production',
      owner: description.owner ?? options.defaultOwner,
      definition: serverDefinition(description),
    },
  };
}
