/**
 * A catalog backend module that publishes the developer portal's Published API Products
 * as catalog entities of kind API.
 *
 * @packageDocumentation
 */
export {};
