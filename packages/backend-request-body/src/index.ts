/**
 * Reads HTTP request bodies for backend plugins with hard limits on size, time and
 * encoding.
 *
 * @packageDocumentation
 */
export {
  readUtf8RequestBody,
  RequestBodyError,
  type ReadUtf8RequestBodyOptions,
  type RequestBodyFailure,
} from './readUtf8RequestBody';
