/**
 * Reads HTTP request bodies for backend plugins with hard limits on size, time and
 * encoding.
 *
 * @packageDocumentation
 */
export { readUtf8RequestBody, type ReadUtf8RequestBodyOptions } from './readUtf8RequestBody';
export { RequestBodyError, type RequestBodyFailure } from './RequestBodyError';
