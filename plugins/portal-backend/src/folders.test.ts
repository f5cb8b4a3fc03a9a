/*
 * The folders of src/ depend on each other in one direction only (issue #15): router →
 * service → {resources, permissions} → store, and nothing imports its way back up. Each
 * relative import of every file (tests included) is an edge between top-level folders;
 * the files at the top of src/ (plugin wiring, config) are not a folder and are left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const SRC = __dirname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The top-level folder of a file under src/, or undefined for a file at the top. */
function folderOf(file: string): string | undefined {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Edges between folders: `from` → the set of folders it imports. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    if (from === undefined) continue;
    const imports = readFileSync(file, 'utf8').matchAll(
      /(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g,
    );
    for (const [, specifier] of imports) {
      const to = folderOf(resolve(dirname(file), specifier));
      if (to === undefined || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** The first cycle found, as a path of folders, or undefined. */
function findCycle(graph: Map<string, Set<string>>): string[] | undefined {
  const done = new Set<string>();
  const visit = (node: string, path: string[]): string[] | undefined => {
    const start = path.indexOf(node);
    if (start >= 0) return [...path.slice(start), node];
    if (done.has(node)) return undefined;
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next, [...path, node]);
      if (cycle) return cycle;
    }
    done.add(node);
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return undefined;
}

describe('src/ folders', () => {
  it('import each other without cycles', () => {
    const graph = folderGraph();
    // The check sees the edges it must judge (a regex that matched nothing would pass).
    expect(graph.get('service')).toContain('store');
    expect(graph.get('resources')).toContain('store');
    expect(findCycle(graph)).toBeUndefined();
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['store', new Set(['resources'])],
      ['resources', new Set(['store'])],
    ]);
    expect(findCycle(graph)).toEqual(['store', 'resources', 'store']);
  });
});
