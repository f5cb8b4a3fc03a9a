/**
 * The MCP broker backend plugin for Backstage.
 *
 * @packageDocumentation
 */
export { mcpBrokerPlugin as default } from './plugin';
