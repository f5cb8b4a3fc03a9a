/**
 * A catalog backend module that publishes the developer portal's Published API Products
 * as catalog entities of kind API.
 *
 * @packageDocumentation
 */
export { catalogModulePortalEntityProvider as default } from './module';
export {
  PortalEntityProvider,
  PORTAL_ENTITY_PROVIDER_NAME,
  type PortalEntityProviderOptions,
} from './PortalEntityProvider';
export {
  PORTAL_API_PRODUCT_ANNOTATION,
  apiEntityName,
  isPublished,
  normalizeTags,
  productToEntity,
  type ProductEntityOptions,
} from './productEntity';
