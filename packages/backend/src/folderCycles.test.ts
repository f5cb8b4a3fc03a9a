/*
 * Each plugin's source folders form a DAG: a cycle between folders means a layer reaches
 * upwards (the broker: protocol <- backend <- calls <- router, sessions and store beside; the
 * portal: router -> service -> {resources, permissions} -> store). Files too: a circle between
 * two files of one folder is the same tangle at a smaller scale, which the folder graph cannot
 * see. The failure names the loop and the imports that close it (testing/folderGraph.ts). One
 * check for every plugin of this repository, so that the rule and its reading of imports are the
 * same everywhere.
 */
import path from 'node:path';
import { findFolderCycles, readFileGraph, readFolderGraph } from './testing/folderGraph';

const PLUGINS = [
  'portal-backend',
  'mcp-broker-backend',
  'catalog-backend-module-portal',
  'catalog-backend-module-mcp-broker',
];
const roots = PLUGINS.map(name => ({
  name,
  root: path.resolve(__dirname, '../../../plugins', name, 'src'),
}));

describe('folder and file dependencies', () => {
  it.each(roots)('$name has no folder cycles', ({ root }) => {
    const graph = readFolderGraph(root);
    // The reading sees imports at all (a pattern that matched nothing would pass every tree).
    expect([...graph.values()].some(edges => edges.size > 0)).toBe(true);
    const cycles = findFolderCycles(graph);
    if (cycles.length > 0) {
      throw new Error(`folder cycles in ${root}:\n${cycles.join('\n')}`);
    }
  });

  it.each(roots)('$name has no file cycles', ({ root }) => {
    const graph = readFileGraph(root);
    expect([...graph.values()].some(edges => edges.size > 0)).toBe(true);
    const cycles = findFolderCycles(graph);
    if (cycles.length > 0) {
      throw new Error(`file cycles in ${root}:\n${cycles.join('\n')}`);
    }
  });

  it('names the loop when there is one', () => {
    const graph = new Map([
      ['a', new Map([['b', "a/x.ts imports '../b/y'"]])],
      ['b', new Map([['c', "b/y.ts imports '../c/z'"]])],
      ['c', new Map([['a', "c/z.ts imports '../a/x'"]])],
      ['d', new Map([['a', "d/w.ts imports '../a/x'"]])],
    ]);
    expect(findFolderCycles(graph)).toEqual([
      [
        '{a, b, c}: a -> b -> c -> a',
        "  a/x.ts imports '../b/y'",
        "  b/y.ts imports '../c/z'",
        "  c/z.ts imports '../a/x'",
      ].join('\n'),
    ]);
    graph.get('c')!.delete('a');
    expect(findFolderCycles(graph)).toEqual([]);
  });
});
