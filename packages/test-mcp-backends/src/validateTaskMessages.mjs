// The child process of validateTaskMessages.ts: reads `[{ schema, message }]` as JSON on stdin,
// parses each message with the named schema of @modelcontextprotocol/ext-tasks (core/v2, then
// core/v1), and prints a JSON array of the problems found (empty when every message fits).
const v2 = await import('@modelcontextprotocol/ext-tasks/core/v2');
const v1 = await import('@modelcontextprotocol/ext-tasks/core/v1');

let input = '';
for await (const chunk of process.stdin) input += chunk;
const problems = [];
JSON.parse(input).forEach(({ schema, message }, index) => {
  const parser = v2[schema] ?? v1[schema];
  if (parser === undefined || typeof parser.safeParse !== 'function') {
    problems.push(`#${index} ${schema}: no such schema in @modelcontextprotocol/ext-tasks`);
    return;
  }
  const parsed = parser.safeParse(message);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map(issue => `${issue.path.join('.') || '(root)'} ${issue.message}`)
      .join('; ');
    problems.push(`#${index} ${schema}: ${issues}`);
  }
});
process.stdout.write(JSON.stringify(problems));
