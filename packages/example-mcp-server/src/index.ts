/**
 * The example MCP servers used by `yarn start` and the tests: a 2025-11-25 (sessions) one and a
 * 2026-07-28 (stateless, SDK v2) one.
 *
 * @packageDocumentation
 */
export { startExampleMcpServer } from './server';
export type { ExampleMcpServer, ExampleMcpServerOptions } from './server';
export { startModernExampleMcpServer } from './modernServer';
export type { ModernExampleMcpServer, ModernExampleMcpServerOptions } from './modernServer';
