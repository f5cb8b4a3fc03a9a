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
