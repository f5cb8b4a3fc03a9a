/* Runs the conformance scenario backend: `PORT` (default 3102), `HOST` (default 127.0.0.1). */
import { startConformanceBackend } from './conformanceBackend';

startConformanceBackend({ port: Number(process.env.PORT ?? 3102), host: process.env.HOST }).then(
  backend => {
    process.stdout.write(`conformance MCP backend listening on ${backend.url}\n`);
    const stop = () =>
      backend.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  },
  error => {
    process.stderr.write(`conformance MCP backend failed to start: ${error}\n`);
    process.exit(1);
  },
);
