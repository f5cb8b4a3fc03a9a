/*
 * The source folders form a DAG. The broker's layers are
 * protocol ← (upstream, calls) ← broker ← router, with sessions and store beside; a cycle
 * between folders means a layer reaches upwards, and the failure names the loop and the imports
 * that close it. The portal's tree is read as a second case and only reported, not asserted: its
 * cycles are another change's business.
 */
import path from 'node:path';
import { findFolderCycles, readFolderGraph } from './testing/folderGraph';

const roots = [
  { name: 'mcp-broker-backend', root: __dirname, enforced: true },
  {
    name: 'portal-backend',
    root: path.resolve(__dirname, '../../portal-backend/src'),
    enforced: false,
  },
];

describe('folder dependencies', () => {
  it.each(roots.filter(r => r.enforced))('$name has no folder cycles', ({ root }) => {
    const cycles = findFolderCycles(readFolderGraph(root));
    if (cycles.length > 0) {
      throw new Error(`folder cycles in ${root}:\n${cycles.join('\n')}`);
    }
  });

  it.each(roots.filter(r => !r.enforced))('$name folder cycles are reported', ({ root }) => {
    const cycles = findFolderCycles(readFolderGraph(root));
    if (cycles.length > 0) {
      // Reported, not failed: see the design comment.
      // eslint-disable-next-line no-console
      console.warn(`folder cycles in ${root} (not enforced here):\n${cycles.join('\n')}`);
    }
    expect(Array.isArray(cycles)).toBe(true);
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
