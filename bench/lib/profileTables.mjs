/*
 * Sums a V8 CPU profile (.cpuprofile) or sampling heap profile (.heapprofile) by npm
 * package: "self" is where a sample's innermost frame is, "inclusive" counts a package once
 * whenever any of its frames is on the sample's stack. Frames outside node_modules are
 * named `repo:<plugins|packages>/<name>` for this repository's workspaces (`repo:<file>` for
 * its other files, e.g. the benchmark's own preload), `node:<module>` for
 * Node's own JavaScript, and `(native)`, `(garbage collector)`, `(program)` as V8 names
 * them. Idle samples are left out. Stacks end at the first `await` (V8 samples the
 * synchronous stack), so an async function's inclusive time is only its synchronous parts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The package a call frame belongs to (see the file comment). */
export function packageOf(callFrame) {
  const { url, functionName } = callFrame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const modules = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g);
  if (modules) return modules[modules.length - 1].slice('node_modules/'.length);
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const relative = path.relative(repoRoot, file);
  if (relative.startsWith('..')) return file;
  const workspace = relative.match(/^((?:plugins|packages)\/[^/]+)/);
  return `repo:${workspace ? workspace[1] : relative}`;
}

function functionOf(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${url ? `${path.basename(url)}:${lineNumber + 1}` : ''}`.trim();
}

/**
 * `{ busyMs, packages: [{ name, selfMs, inclusiveMs }], functions: [{ name, selfMs,
 * inclusiveMs }] }` of a CPU profile, sorted by self time. `onSample(stack, ms)`, if given,
 * sees every busy sample's stack (call frames, innermost first).
 */
export function cpuByPackage(profile, onSample = undefined) {
  const nodes = new Map(profile.nodes.map(node => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parents.set(child, node.id);
  const self = new Map();
  const inclusive = new Map();
  const functions = new Map();
  const functionsInclusive = new Map();
  let busyMs = 0;
  const add = (map, key, ms) => map.set(key, (map.get(key) ?? 0) + ms);
  profile.samples.forEach((id, index) => {
    // timeDeltas[i] is the time before sample i; the time after it belongs to it.
    const ms = (profile.timeDeltas[index + 1] ?? profile.timeDeltas[index]) / 1000;
    const leaf = nodes.get(id);
    const leafPackage = packageOf(leaf.callFrame);
    if (leafPackage === '(idle)') return;
    busyMs += ms;
    add(self, leafPackage, ms);
    add(functions, `${leafPackage}: ${functionOf(leaf)}`, ms);
    const seen = new Set();
    const stack = [];
    for (let at = id; at !== undefined; at = parents.get(at)) {
      const node = nodes.get(at);
      stack.push(node.callFrame);
      const name = packageOf(node.callFrame);
      const fn = `${name}: ${functionOf(node)}`;
      for (const key of [name, fn]) {
        if (seen.has(key)) continue;
        seen.add(key);
        add(key === name ? inclusive : functionsInclusive, key, ms);
      }
    }
    onSample?.(stack, ms);
  });
  return {
    busyMs,
    packages: [...self]
      .map(([name, selfMs]) => ({ name, selfMs, inclusiveMs: inclusive.get(name) }))
      .sort((a, b) => b.selfMs - a.selfMs),
    functions: [...functions]
      .map(([name, selfMs]) => ({ name, selfMs, inclusiveMs: functionsInclusive.get(name) }))
      .sort((a, b) => b.selfMs - a.selfMs),
    functionsByInclusive: [...functionsInclusive]
      .map(([name, inclusiveMs]) => ({ name, selfMs: functions.get(name) ?? 0, inclusiveMs }))
      .sort((a, b) => b.inclusiveMs - a.inclusiveMs),
  };
}

/** `{ totalBytes, packages: [{ name, selfBytes, inclusiveBytes }] }` of a heap profile. */
export function allocationByPackage(heapProfile) {
  const self = new Map();
  const inclusive = new Map();
  let totalBytes = 0;
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node, above) => {
    const name = packageOf(node.callFrame);
    const stack = above.includes(name) ? above : [...above, name];
    if (node.selfSize > 0) {
      totalBytes += node.selfSize;
      add(self, name, node.selfSize);
      for (const each of stack) add(inclusive, each, node.selfSize);
    }
    for (const child of node.children) walk(child, stack);
  };
  walk(heapProfile.head, []);
  return {
    totalBytes,
    packages: [...self]
      .map(([name, selfBytes]) => ({ name, selfBytes, inclusiveBytes: inclusive.get(name) }))
      .sort((a, b) => b.selfBytes - a.selfBytes),
  };
}
