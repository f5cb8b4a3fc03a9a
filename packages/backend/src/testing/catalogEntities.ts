/*
 * Reads API entities of the catalog modules (portal products, MCP broker servers) from the real catalog
 * (`/api/catalog/entities/by-query`), for end-to-end tests of what the module publishes.
 */
import type { BackendProcess } from './startBackendProcess';

/** An entity as the catalog serves it (the fields the tests read). */
export interface CatalogEntity {
  kind: string;
  metadata: {
    name: string;
    title?: string;
    description?: string;
    tags?: string[];
    links?: Array<{ url: string; title?: string }>;
    annotations?: Record<string, string>;
  };
  spec?: {
    type?: string;
    lifecycle?: string;
    owner?: string;
    definition?: string;
  };
}

/** The annotation the module puts on every entity (see the module's README). */
const API_PRODUCT_ANNOTATION = 'portal.devportal.io/api-product';

/** The catalog's API entity of the product `namespace/name`, or undefined when there is none. */
export async function apiEntityOfProduct(
  backend: BackendProcess,
  token: string,
  product: { namespace: string; name: string },
): Promise<CatalogEntity | undefined> {
  return apiEntityAnnotated(
    backend,
    token,
    API_PRODUCT_ANNOTATION,
    `${product.namespace}/${product.name}`,
  );
}

/**
 * The catalog's API entity of the MCP broker's server `name` (published by the
 * catalog-backend-module-mcp-broker), or undefined when there is none.
 */
export async function apiEntityOfMcpServer(
  backend: BackendProcess,
  token: string,
  name: string,
): Promise<CatalogEntity | undefined> {
  return apiEntityAnnotated(backend, token, 'mcp.devportal.io/server', name);
}

async function apiEntityAnnotated(
  backend: BackendProcess,
  token: string,
  annotation: string,
  value: string,
): Promise<CatalogEntity | undefined> {
  const query = new URLSearchParams({
    filter: `kind=API,metadata.annotations.${annotation}=${value}`,
  });
  const response = await fetch(`${backend.baseUrl}/api/catalog/entities/by-query?${query}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!response.ok) {
    throw new Error(`the catalog answered ${response.status}: ${await response.text()}`);
  }
  const body = (await response.json()) as { items: CatalogEntity[] };
  return body.items[0];
}
