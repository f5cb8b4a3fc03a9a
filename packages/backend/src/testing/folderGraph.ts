/*
 * The folder and file dependency graphs of a TypeScript source tree, and their cycles, for a
 * test that keeps the layers a DAG and every file's imports free of circles.
 *
 * Every non-test `.ts` file under a root is read; each relative `import … from`,
 * `export … from` and `import('…')` (type-only ones too: a type import is a dependency of the
 * design) becomes an edge from the importing file's folder to the imported file's folder.
 * Files directly in the root (`plugin.ts`, `config.ts`) are nodes of their own, since the root
 * is the wiring above every folder and not a layer. Cycles are the strongly connected
 * components with more than one node (Tarjan's algorithm), reported with one concrete loop each
 * so a failure names what to cut. Package imports (`express`, `@backstage/…`) are ignored.
 * Deterministic: files and edges are sorted before the search.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Folder → the folders it imports from, with one example import per edge. */
export type FolderGraph = Map<string, Map<string, string>>;

const IMPORT_PATTERN = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]*)['"]/g;

/** Reads the folder graph of the non-test `.ts` files under `root`. */
export function readFolderGraph(root: string): FolderGraph {
  return readGraph(root, file => nodeOf(root, file));
}

/**
 * Reads the file graph of the non-test `.ts` files under `root`: each file (by its path under
 * the root) → the files it imports, with the import that makes each edge.
 */
export function readFileGraph(root: string): FolderGraph {
  return readGraph(root, file => path.relative(root, file).split(path.sep).join('/'));
}

function readGraph(root: string, nodeOfFile: (file: string) => string): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const file of listSourceFiles(root)) {
    const from = nodeOfFile(file);
    if (!graph.has(from)) graph.set(from, new Map());
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT_PATTERN)) {
      const target = resolveImport(path.dirname(file), match[1]);
      if (target === undefined || !isInside(root, target)) continue;
      const to = nodeOfFile(target);
      if (to === from) continue;
      const edges = graph.get(from)!;
      if (!edges.has(to)) {
        edges.set(to, `${path.relative(root, file)} imports '${match[1]}'`);
      }
    }
  }
  return graph;
}

/**
 * The cycles of `graph`: one entry per strongly connected component of more than one folder,
 * as a readable loop (`broker -> backend -> broker`) with the import behind each step.
 */
export function findFolderCycles(graph: FolderGraph): string[] {
  const components = stronglyConnectedComponents(graph).filter(c => c.length > 1);
  return components.map(component => describeLoop(graph, component));
}

function listSourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort(byName)) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== '__fixtures__') {
        files.push(...listSourceFiles(full));
      }
    } else if (
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.d.ts') &&
      !/\.test\.ts$/.test(entry.name)
    ) {
      files.push(full);
    }
  }
  return files;
}

function byName(a: fs.Dirent, b: fs.Dirent): number {
  if (a.name === b.name) return 0;
  return a.name < b.name ? -1 : 1;
}

/** The file a relative specifier names (`x.ts`, `x/index.ts`), or undefined when none exists. */
function resolveImport(fromDir: string, specifier: string): string | undefined {
  const base = path.resolve(fromDir, specifier);
  const candidates = [base, `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find(c => fs.existsSync(c) && fs.statSync(c).isFile());
}

function isInside(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** A file's node: its folder relative to the root, or the file itself when it is in the root. */
function nodeOf(root: string, file: string): string {
  const folder = path.relative(root, path.dirname(file)).split(path.sep).join('/');
  return folder === '' ? path.basename(file) : folder;
}

function stronglyConnectedComponents(graph: FolderGraph): string[][] {
  const nodes = [...new Set([...graph.keys(), ...[...graph.values()].flatMap(e => [...e.keys()])])];
  nodes.sort();
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;

  // Recursion depth is bounded by the number of folders (a few dozen).
  const visit = (node: string) => {
    index.set(node, counter);
    lowLink.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
      if (!index.has(next)) {
        visit(next);
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(next)!));
      } else if (onStack.has(next)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(next)!));
      }
    }
    if (lowLink.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component.sort());
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return components.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** One loop through a component, found by breadth-first search back to its first member. */
function describeLoop(graph: FolderGraph, component: string[]): string {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map<string, string>();
  const queue = [start];
  let last: string | undefined;
  while (queue.length > 0 && last === undefined) {
    const node = queue.shift()!;
    for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
      if (!members.has(next)) continue;
      if (next === start) {
        last = node;
        break;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  const loop = [start];
  for (let node = last!; node !== start; node = previous.get(node)!) loop.splice(1, 0, node);
  loop.push(start);
  const steps = loop.slice(0, -1).map((node, i) => `  ${graph.get(node)!.get(loop[i + 1])}`);
  return [`{${component.join(', ')}}: ${loop.join(' -> ')}`, ...steps].join('\n');
}
