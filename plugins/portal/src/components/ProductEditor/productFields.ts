/*
 * The editable fields of an API product as a form holds them (strings, tags as one comma-separated
 * line), and their translation to the API's create body and merge patch. Empty optional fields are
 * left out of a create body and cleared (`null`) by a patch, as JSON merge patch means.
 */
import { MCP_TARGET_GROUP, type McpTarget } from '@devportal/plugin-portal-common';
import type {
  ApiProduct,
  ApiProductPatch,
  ApprovalMode,
  CreateApiProductRequest,
  ObjectRef,
  PublishStatus,
} from '@devportal/plugin-portal-common';

/** The form's view of a product's spec. */
export interface ProductFields {
  displayName: string;
  description: string;
  version: string;
  /** Comma-separated. */
  tags: string;
  docsURL: string;
  openAPISpecURL: string;
  contactEmail: string;
  contactTeam: string;
  contactUrl: string;
  approvalMode: ApprovalMode;
  publishStatus: PublishStatus;
}

/** Empty fields for a new product. */
export const EMPTY_PRODUCT_FIELDS: ProductFields = {
  displayName: '',
  description: '',
  version: '',
  tags: '',
  docsURL: '',
  openAPISpecURL: '',
  contactEmail: '',
  contactTeam: '',
  contactUrl: '',
  approvalMode: 'manual',
  publishStatus: 'Draft',
};

/** A product's current fields. */
export function fieldsOf(product: ApiProduct): ProductFields {
  const { spec } = product;
  return {
    displayName: spec.displayName,
    description: spec.description ?? '',
    version: spec.version ?? '',
    tags: (spec.tags ?? []).join(', '),
    docsURL: spec.documentation?.docsURL ?? '',
    openAPISpecURL: spec.documentation?.openAPISpecURL ?? '',
    contactEmail: spec.contact?.email ?? '',
    contactTeam: spec.contact?.team ?? '',
    contactUrl: spec.contact?.url ?? '',
    approvalMode: spec.approvalMode,
    publishStatus: spec.publishStatus,
  };
}

/** `a, b,,c ` → `['a', 'b', 'c']`. */
export function parseTags(text: string): string[] {
  return text
    .split(',')
    .map(tag => tag.trim())
    .filter(tag => tag !== '');
}

const optional = (text: string) => (text.trim() === '' ? undefined : text.trim());

function compact<T extends Record<string, unknown>>(object: T): Partial<T> | undefined {
  const entries = Object.entries(object).filter(([, value]) => value !== undefined);
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as Partial<T>);
}

/** The body of `POST /apiproducts` for a product on `route` named `name`. */
export function createBody(
  fields: ProductFields,
  route: ObjectRef,
  name: string,
  owner: string | undefined,
): CreateApiProductRequest {
  const tags = parseTags(fields.tags);
  const documentation = compact({
    docsURL: optional(fields.docsURL),
    openAPISpecURL: optional(fields.openAPISpecURL),
  });
  const contact = compact({
    email: optional(fields.contactEmail),
    team: optional(fields.contactTeam),
    url: optional(fields.contactUrl),
  });
  return {
    metadata: {
      namespace: route.namespace,
      name,
      ...(owner !== undefined && { annotations: { 'backstage.io/owner': owner } }),
    },
    spec: {
      displayName: fields.displayName.trim(),
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route.name },
      approvalMode: fields.approvalMode,
      publishStatus: fields.publishStatus,
      ...(optional(fields.description) !== undefined && { description: fields.description.trim() }),
      ...(optional(fields.version) !== undefined && { version: fields.version.trim() }),
      ...(tags.length > 0 && { tags }),
      ...(documentation !== undefined && { documentation }),
      ...(contact !== undefined && { contact }),
    },
  };
}

/** The body of `POST /apiproducts` for a product on an MCP server or endpoint (owned by its owner). */
export function mcpCreateBody(
  fields: ProductFields,
  namespace: string,
  name: string,
  target: McpTarget,
  plans: NonNullable<CreateApiProductRequest['spec']['plans']>,
): CreateApiProductRequest {
  const body = createBody(fields, { namespace, name: target.name }, name, undefined);
  return {
    ...body,
    spec: {
      ...body.spec,
      targetRef: { group: MCP_TARGET_GROUP, kind: target.kind, name: target.name },
      plans,
    },
  } as CreateApiProductRequest;
}

/**
 * The merge patch from `before` to `after`: changed fields only, `null` for cleared ones, with
 * the product's `resourceVersion` as a precondition (a concurrent change answers 409).
 */
export function patchBody(product: ApiProduct, after: ProductFields): ApiProductPatch {
  const before = fieldsOf(product);
  const spec: Record<string, unknown> = {};
  const value = (text: string) => optional(text) ?? null;
  if (after.displayName.trim() !== before.displayName) spec.displayName = after.displayName.trim();
  if (after.description !== before.description) spec.description = value(after.description);
  if (after.version !== before.version) spec.version = value(after.version);
  if (after.tags !== before.tags) {
    const tags = parseTags(after.tags);
    spec.tags = tags.length === 0 ? null : tags;
  }
  if (after.approvalMode !== before.approvalMode) spec.approvalMode = after.approvalMode;
  if (after.publishStatus !== before.publishStatus) spec.publishStatus = after.publishStatus;
  const documentation: Record<string, unknown> = {};
  if (after.docsURL !== before.docsURL) documentation.docsURL = value(after.docsURL);
  if (after.openAPISpecURL !== before.openAPISpecURL)
    documentation.openAPISpecURL = value(after.openAPISpecURL);
  if (Object.keys(documentation).length > 0) spec.documentation = documentation;
  const contact: Record<string, unknown> = {};
  if (after.contactEmail !== before.contactEmail) contact.email = value(after.contactEmail);
  if (after.contactTeam !== before.contactTeam) contact.team = value(after.contactTeam);
  if (after.contactUrl !== before.contactUrl) contact.url = value(after.contactUrl);
  if (Object.keys(contact).length > 0) spec.contact = contact;
  return { metadata: { resourceVersion: product.metadata.resourceVersion }, spec };
}

/** A DNS-1123 label (what product names must be), or the reason it is not one. */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'A name is required';
  if (name.length > 63) return 'At most 63 characters';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
    return 'Lower-case letters, digits and "-", starting and ending with a letter or digit';
  }
  return undefined;
}
