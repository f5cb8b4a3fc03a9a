/*
 * Constant names of the portal's contract, used by its schemas, the backend and frontends.
 * They live apart from the schemas and types so that both can import them.
 */

/** apiVersion of the portal's own kinds. @public */
export const DEVPORTAL_API_VERSION = 'devportal.kuadrant.io/v1alpha1';

/** The annotation holding an API product's owner (an entity ref). @public */
export const OWNER_ANNOTATION = 'backstage.io/owner';

/** `reviewedBy` of keys approved by a product in automatic approval mode. @public */
export const AUTOMATIC_APPROVAL_REVIEWER = 'system:automatic-approval';

/**
 * The annotation naming the MCP broker server an entity describes or an MCP product targets
 * (contract mcp-access §1). `@devportal/plugin-mcp-broker-common` exports the same value: the
 * two families share no package, and packages/backend's pluginIndependence test asserts the
 * values are equal.
 *
 * @public
 */
export const MCP_SERVER_ANNOTATION = 'mcp.devportal.io/server';

/** The annotation naming the MCP broker's curated endpoint (see MCP_SERVER_ANNOTATION). @public */
export const MCP_ENDPOINT_ANNOTATION = 'mcp.devportal.io/endpoint';

/** The `group` of an MCP product's `spec.targetRef` (contract mcp-access §3.1). @public */
export const MCP_TARGET_GROUP = 'mcp.devportal.io';
