/*
 * Maps a portal API Product onto a catalog entity of kind API (spec §10). Pure functions,
 * no I/O, so the catalog's rules (names, tags) are tested here once.
 *
 * Guarantees: the entity name is valid (≤ 63 characters, catalog name characters) and
 * unique per product — `<namespace>.<name>`, unambiguous because neither part (both
 * DNS-1123 labels) can contain a dot; when that is too long, a prefix plus a hash of the
 * full `<namespace>/<name>`. Tags are normalised to the catalog's tag rules, and the API
 * definition is never empty.
 */
import { createHash } from 'node:crypto';
import type { ApiEntity, Entity } from '@backstage/catalog-model';
import {
  describeToolCallLimit,
  isMcpTarget,
  MCP_ENDPOINT_ANNOTATION,
  MCP_SERVER_ANNOTATION,
  OWNER_ANNOTATION,
  type ApiProduct,
  type ObjectRef,
} from '@devportal/plugin-portal-common';

/** The annotation that names the product an entity comes from. @public */
export const PORTAL_API_PRODUCT_ANNOTATION = 'portal.devportal.io/api-product';

/** The longest entity name and tag the catalog accepts. */
const MAX_NAME_LENGTH = 63;
/** Hex digits of the hash that keeps truncated names unique (40 bits). */
const NAME_HASH_LENGTH = 10;

/** How the entities link back to the portal. @public */
export interface ProductEntityOptions {
  /**
   * The address of a product in the portal's frontend; `{namespace}` and `{name}` are
   * replaced by the URL-encoded parts.
   */
  productUrlTemplate: string;
  /** The location the entities are managed by, e.g. `portal:<base URL>`. */
  location: string;
}

/** The catalog entity name of the product `ref`: see the file comment. @public */
export function apiEntityName(ref: ObjectRef): string {
  const name = `${ref.namespace}.${ref.name}`;
  if (name.length <= MAX_NAME_LENGTH) return name;
  const hash = createHash('sha256')
    .update(`${ref.namespace}/${ref.name}`)
    .digest('hex')
    .slice(0, NAME_HASH_LENGTH);
  const prefix = name.slice(0, MAX_NAME_LENGTH - NAME_HASH_LENGTH - 1).replace(/[-_.]+$/, '');
  return `${prefix}-${hash}`;
}

/**
 * Tags as the catalog accepts them: lower case, runs of other characters turned into one
 * `-`, at most 63 characters, no empty or repeated tag.
 *
 * @public
 */
export function normalizeTags(tags: readonly string[] | undefined): string[] {
  const normalized = (tags ?? []).map(tag =>
    tag
      .toLocaleLowerCase('en-US')
      .replace(/[^a-z0-9+#]+/g, '-')
      .slice(0, MAX_NAME_LENGTH)
      .replace(/^-+|-+$/g, ''),
  );
  return [...new Set(normalized.filter(tag => tag !== ''))];
}

/** Whether the product is one the catalog should show. @public */
export function isPublished(product: ApiProduct): boolean {
  return product.spec.publishStatus === 'Published';
}

/**
 * The API entity of a Published product, or undefined when the product has no owner
 * (which the portal never stores, but an entity needs one).
 *
 * @public
 */
export function productToEntity(
  product: ApiProduct,
  options: ProductEntityOptions,
): ApiEntity | undefined {
  const { namespace, name } = product.metadata;
  const owner = product.metadata.annotations?.[OWNER_ANNOTATION];
  if (owner === undefined) return undefined;
  const { spec } = product;
  const openApiUrl = spec.documentation?.openAPISpecURL;
  const productUrl = options.productUrlTemplate
    .replace(/\{namespace\}/g, encodeURIComponent(namespace))
    .replace(/\{name\}/g, encodeURIComponent(name));
  const links: NonNullable<Entity['metadata']['links']> = [
    { url: productUrl, title: 'API product in the portal', type: 'portal' },
  ];
  if (spec.documentation?.docsURL !== undefined) {
    links.push({
      url: spec.documentation.docsURL,
      title: 'Documentation',
      icon: 'docs',
      type: 'documentation',
    });
  }
  if (spec.contact?.url !== undefined) {
    links.push({ url: spec.contact.url, title: 'Contact', type: 'contact' });
  }
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'API',
    metadata: {
      name: apiEntityName(product.metadata),
      title: spec.displayName,
      ...(spec.description !== undefined && { description: spec.description }),
      tags: normalizeTags(spec.tags),
      links,
      annotations: {
        [PORTAL_API_PRODUCT_ANNOTATION]: `${namespace}/${name}`,
        ...mcpTargetAnnotation(product),
        'backstage.io/managed-by-location': options.location,
        'backstage.io/managed-by-origin-location': options.location,
      },
    },
    spec: {
      type: openApiUrl === undefined ? 'other' : 'openapi',
      lifecycle: 'production',
      owner,
      definition:
        openApiUrl === undefined
          ? plainDefinition(product)
          : ({ $text: openApiUrl } as unknown as string),
    },
  };
}

/**
 * An MCP product's entity names its server (or endpoint) the way the broker's entities do,
 * so a frontend can join the two (contract mcp-access §3.6).
 */
function mcpTargetAnnotation(product: ApiProduct): Record<string, string> {
  const target = product.spec.targetRef;
  if (!isMcpTarget(target)) return {};
  return {
    [target.kind === 'MCPServer' ? MCP_SERVER_ANNOTATION : MCP_ENDPOINT_ANNOTATION]: target.name,
  };
}

/** The definition of a product without an OpenAPI document: what the portal knows. */
function plainDefinition(product: ApiProduct): string {
  const { spec, metadata } = product;
  const lines = [
    `# ${spec.displayName}`,
    '',
    `API product ${metadata.namespace}/${metadata.name} of the developer portal` +
      `${spec.version === undefined ? '' : `, version ${spec.version}`}.`,
  ];
  if (spec.description !== undefined) lines.push('', spec.description);
  if (isMcpTarget(spec.targetRef)) {
    // An MCP product's plans are tool-call quotas; access needs no key.
    const quotas = (spec.plans ?? []).map(
      plan =>
        `- ${plan.tier}: ${
          plan.limits.toolCalls.map(describeToolCallLimit).join('; ') || 'no quota'
        }`,
    );
    if (quotas.length > 0) lines.push('', 'Plans:', ...quotas);
    lines.push('', 'Request access in the portal; your own sign-in is the credential.');
    return `${lines.join('\n')}\n`;
  }
  const plans = product.status?.plans.map(plan => plan.tier) ?? [];
  if (plans.length > 0) lines.push('', `Plans: ${plans.join(', ')}.`);
  lines.push('', 'Request an API key for it in the portal.');
  return `${lines.join('\n')}\n`;
}
