/**
 * The portal backend plugin for Backstage.
 *
 * @packageDocumentation
 */
export { portalPlugin as default } from './plugin';
