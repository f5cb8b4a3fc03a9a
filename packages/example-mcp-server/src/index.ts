/**
 * The example MCP server used by `yarn start` and the tests.
 *
 * @packageDocumentation
 */
export { startExampleMcpServer } from './server';
export type { ExampleMcpServer, ExampleMcpServerOptions } from './server';
