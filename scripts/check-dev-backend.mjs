#!/usr/bin/env node
// Checks a running development backend (`yarn start`) the way a newcomer would use it: signs in
// as alice through the development oauth2-proxy sign-in, then connects the official MCP SDK
// client to the broker and lists the tools of both example MCP servers (2025-11-25 and
// 2026-07-28). Waits (polling, up to --timeout seconds, default 600: the README's run command
// installs first) until the backend answers; exits 0 when alice signed in and both servers'
// tools are listed, 1 otherwise.
//   node scripts/check-dev-backend.mjs [--base-url http://127.0.0.1:7007] [--timeout 600]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEV_BACKEND_URL, signIn, untilDeadline } from './lib/devBackend.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return index === -1 ? fallback : args[index + 1];
};
const baseUrl = option('--base-url', DEV_BACKEND_URL);
const deadline = Date.now() + Number(option('--timeout', '600')) * 1000;

async function listBrokerTools(token) {
  const client = new Client({ name: 'check-dev-backend', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp-broker/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools.map(tool => tool.name);
  } finally {
    await client.close();
  }
}

try {
  const token = await untilDeadline(deadline, 'alice signing in', () => signIn(baseUrl, 'alice'));
  process.stdout.write('check-dev-backend: alice signed in\n');
  const tools = await untilDeadline(
    deadline,
    'listing the example tools through the broker',
    async () => {
      const names = await listBrokerTools(token);
      for (const prefix of ['example_', 'example-modern_']) {
        if (!names.some(name => name.startsWith(prefix))) {
          throw new Error(`no ${prefix}* tool among [${names.join(', ')}]`);
        }
      }
      return names;
    },
  );
  process.stdout.write(`check-dev-backend: the broker lists ${tools.join(', ')}\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`check-dev-backend: ${error.message}\n`);
  process.exit(1);
}
