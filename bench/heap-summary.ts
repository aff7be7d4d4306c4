/**
 * Where a heap goes, from a V8 heap snapshot (a `.heapsnapshot` file: `BENCH_HEAP_SNAPSHOT=<file>` in the listings
 * row, DevTools, or `v8.writeHeapSnapshot()`), without DevTools: `node dist/bench/heap-summary.js <file> [top]`.
 *
 * Prints the self size per node type and per constructor (or kind of string/array), then the objects that retain
 * the most (their dominator-tree size: what would be freed with them), each with the chain of objects that dominate
 * it, so "ObjectTable of resources/pods retains 40 MB" reads directly. Snapshots of a 200 MB heap are several hundred
 * megabytes of JSON: they are scanned as bytes, never parsed as one string.
 */
import { readFileSync } from 'node:fs';

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

function section(bytes: Buffer, name: string, from = 0): number {
  const at = bytes.indexOf(`"${name}":[`, from);
  if (at < 0) throw new Error(`no "${name}" in the snapshot`);
  return at + name.length + 4;
}

/** The integers of a JSON array of non-negative integers starting at `start`, until its `]`. */
function integers(bytes: Buffer, start: number, count: number): { values: Float64Array; end: number } {
  const values = new Float64Array(count);
  let n = 0;
  let value = -1;
  let i = start;
  for (; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte >= 48 && byte <= 57) value = (value < 0 ? 0 : value * 10) + (byte - 48);
    else {
      if (value >= 0) {
        values[n++] = value;
        value = -1;
      }
      if (byte === 93) break;
    }
  }
  if (n !== count) throw new Error(`expected ${count} integers, read ${n}`);
  return { values, end: i };
}

function strings(bytes: Buffer, start: number): string[] {
  const out: string[] = [];
  let i = start;
  for (;;) {
    while (bytes[i] !== 34 && bytes[i] !== 93) i++;
    if (bytes[i] === 93) return out;
    let j = i + 1;
    for (;;) {
      j = bytes.indexOf(34, j);
      let backslashes = 0;
      for (let k = j - 1; bytes[k] === 92; k--) backslashes++;
      if (backslashes % 2 === 0) break;
      j++;
    }
    out.push(JSON.parse(bytes.toString('utf8', i, j + 1)) as string);
    i = j + 1;
  }
}

const file = process.argv[2];
const top = Number(process.argv[3] ?? 40);
if (!file) {
  process.stderr.write('usage: heap-summary <file.heapsnapshot> [top]\n');
  process.exit(2);
}
const bytes = readFileSync(file);
const headerEnd = section(bytes, 'nodes');
const headerText = bytes.toString('utf8', 0, headerEnd - '"nodes":['.length).replace(/,\s*$/, '');
const header = JSON.parse(`${headerText}}`) as {
  snapshot: { meta: Meta; node_count: number; edge_count: number };
};
const { meta, node_count: nodeCount, edge_count: edgeCount } = header.snapshot;
const nodeFields = meta.node_fields.length;
const edgeFields = meta.edge_fields.length;
const nodes = integers(bytes, headerEnd, nodeCount * nodeFields);
const edges = integers(bytes, section(bytes, 'edges', nodes.end), edgeCount * edgeFields);
const names = strings(bytes, section(bytes, 'strings', edges.end));

const TYPE = meta.node_fields.indexOf('type');
const NAME = meta.node_fields.indexOf('name');
const SELF = meta.node_fields.indexOf('self_size');
const EDGES = meta.node_fields.indexOf('edge_count');
const EDGE_TYPE = meta.edge_fields.indexOf('type');
const EDGE_NAME = meta.edge_fields.indexOf('name_or_index');
const EDGE_TO = meta.edge_fields.indexOf('to_node');
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const WEAK = edgeTypes.indexOf('weak');
const PROPERTY = edgeTypes.indexOf('property');
const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

const typeOf = (n: number) => nodeTypes[nodes.values[n * nodeFields + TYPE]!] ?? '?';
const nameOf = (n: number) => names[nodes.values[n * nodeFields + NAME]!] ?? '?';
const selfOf = (n: number) => nodes.values[n * nodeFields + SELF]!;
const firstEdge = new Uint32Array(nodeCount + 1);
for (let n = 0; n < nodeCount; n++) firstEdge[n + 1] = firstEdge[n]! + nodes.values[n * nodeFields + EDGES]!;
const edgeTo = (e: number) => edges.values[e * edgeFields + EDGE_TO]! / nodeFields;
const edgeType = (e: number) => edges.values[e * edgeFields + EDGE_TYPE]!;

/** A node's class for the tables: its constructor, or the kind of string, array or code it is. */
function classOf(n: number): string {
  const type = typeOf(n);
  if (type === 'object' || type === 'closure' || type === 'native') return nameOf(n) || `(${type})`;
  if (STRING_TYPES.has(type)) return '(string)';
  if (type === 'array' || type === 'hidden') return `(${type} ${nameOf(n)})`;
  return `(${type})`;
}

const mb = (value: number) => `${(value / 1e6).toFixed(1).padStart(7)} MB`;
let total = 0;
const byType = new Map<string, { size: number; count: number }>();
const byClass = new Map<string, { size: number; count: number }>();
for (let n = 0; n < nodeCount; n++) {
  const size = selfOf(n);
  total += size;
  for (const [map, key] of [
    [byType, typeOf(n)],
    [byClass, classOf(n)],
  ] as const) {
    const entry = map.get(key) ?? { size: 0, count: 0 };
    entry.size += size;
    entry.count++;
    map.set(key, entry);
  }
}
const print = (title: string, map: Map<string, { size: number; count: number }>, rows: number) => {
  process.stdout.write(`\n${title}\n`);
  for (const [key, { size, count }] of [...map].sort((a, b) => b[1].size - a[1].size).slice(0, rows)) {
    process.stdout.write(
      `${mb(size)}  ${String(count).padStart(9)}  ${(size / count).toFixed(0).padStart(6)} B  ${key.slice(0, 100)}\n`,
    );
  }
};
process.stdout.write(`${file}: ${nodeCount.toLocaleString('en-US')} nodes, ${mb(total)} self size in all\n`);
print('self size by node type (size, count, average)', byType, 20);
print('self size by class', byClass, top);

// Dominators (Cooper, Harvey and Kennedy's iterative algorithm) over strong edges, from the synthetic root (node 0).
const order = new Int32Array(nodeCount).fill(-1); // postorder number
const post: number[] = [];
{
  const stack = new Int32Array(nodeCount);
  const next = new Uint32Array(nodeCount);
  const seen = new Uint8Array(nodeCount);
  let depth = 0;
  stack[depth++] = 0;
  seen[0] = 1;
  next[0] = firstEdge[0]!;
  while (depth > 0) {
    const n = stack[depth - 1]!;
    if (next[n]! < firstEdge[n + 1]!) {
      const e = next[n]!++;
      if (edgeType(e) === WEAK) continue;
      const to = edgeTo(e);
      if (seen[to]) continue;
      seen[to] = 1;
      next[to] = firstEdge[to]!;
      stack[depth++] = to;
    } else {
      order[n] = post.length;
      post.push(n);
      depth--;
    }
  }
}
const reachable = post.length;
const predecessorStart = new Uint32Array(reachable + 1);
for (let n = 0; n < nodeCount; n++) {
  if (order[n]! < 0) continue;
  for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e++) {
    if (edgeType(e) === WEAK) continue;
    const to = order[edgeTo(e)]!;
    if (to >= 0) predecessorStart[to + 1]!++;
  }
}
for (let i = 0; i < reachable; i++) predecessorStart[i + 1]! += predecessorStart[i]!;
const predecessors = new Int32Array(predecessorStart[reachable]!);
{
  const fill = predecessorStart.slice(0, reachable);
  for (let n = 0; n < nodeCount; n++) {
    const from = order[n]!;
    if (from < 0) continue;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e++) {
      if (edgeType(e) === WEAK) continue;
      const to = order[edgeTo(e)]!;
      if (to >= 0) predecessors[fill[to]!++] = from;
    }
  }
}
// in postorder numbers; the root is the last
const root = reachable - 1;
const idom = new Int32Array(reachable).fill(-1);
idom[root] = root;
for (let changed = true; changed;) {
  changed = false;
  for (let b = root - 1; b >= 0; b--) {
    let dominator = -1;
    for (let p = predecessorStart[b]!; p < predecessorStart[b + 1]!; p++) {
      let other = predecessors[p]!;
      if (idom[other] === -1) continue;
      if (dominator === -1) {
        dominator = other;
        continue;
      }
      let finger = dominator;
      while (finger !== other) {
        while (finger < other) finger = idom[finger]!;
        while (other < finger) other = idom[other]!;
      }
      dominator = finger;
    }
    if (dominator !== -1 && idom[b] !== dominator) {
      idom[b] = dominator;
      changed = true;
    }
  }
}
const retained = new Float64Array(reachable);
for (let b = 0; b < reachable; b++) retained[b] = selfOf(post[b]!);
for (let b = 0; b < root; b++) if (idom[b]! >= 0) retained[idom[b]!]! += retained[b]!;

/** A short label: the class, and the text of a `name` property that is a string (a cache's or a reflector's). */
function label(b: number): string {
  const n = post[b]!;
  let text = classOf(n);
  for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e++) {
    if (edgeType(e) !== PROPERTY) continue;
    const key = names[edges.values[e * edgeFields + EDGE_NAME]!];
    if (key !== 'name' && key !== 'kind') continue;
    const to = edgeTo(e);
    if (STRING_TYPES.has(typeOf(to))) return `${text}[${key}=${nameOf(to).slice(0, 40)}]`;
    // kind: { name: 'resources/pods', … } of a ListingCache
    for (let f = firstEdge[to]!; f < firstEdge[to + 1]!; f++) {
      if (names[edges.values[f * edgeFields + EDGE_NAME]!] === 'name' && STRING_TYPES.has(typeOf(edgeTo(f))))
        text += `[kind=${nameOf(edgeTo(f)).slice(0, 40)}]`;
    }
  }
  return text;
}

process.stdout.write(`\nobjects retaining the most (retained, self, the object ← what dominates it)\n`);
const candidates = Array.from({ length: root }, (_, b) => b)
  .filter((b) => {
    const type = typeOf(post[b]!);
    return type !== 'synthetic';
  })
  .sort((a, b) => retained[b]! - retained[a]!)
  .slice(0, top * 3);
let shown = 0;
for (const b of candidates) {
  if (shown >= top) break;
  const chain: string[] = [];
  for (let d = idom[b]!, i = 0; d !== root && i < 4; d = idom[d]!, i++) chain.push(label(d));
  process.stdout.write(`${mb(retained[b]!)} ${mb(selfOf(post[b]!))}  ${label(b)} ← ${chain.join(' ← ')}\n`);
  shown++;
}

// The dominator-tree children of the larger objects of the classes named in argv[4] (comma-separated): what inside
// an ObjectTable holds its size, by the property that points at it.
const expand = new Set((process.argv[4] ?? 'ObjectTable,ObjectStore,PodDirectory,Interner').split(','));
const children = new Map<number, number[]>();
for (let b = 0; b < root; b++) {
  const parent = idom[b]!;
  if (parent < 0 || !expand.has(classOf(post[parent]!))) continue;
  let list = children.get(parent);
  if (!list) children.set(parent, (list = []));
  list.push(b);
}
/** The name of the edge from `parent` to `child`, when there is a direct one. */
function edgeName(parent: number, child: number): string {
  const n = post[parent]!;
  const target = post[child]!;
  for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e++) {
    if (edgeTo(e) !== target) continue;
    const nameOrIndex = edges.values[e * edgeFields + EDGE_NAME]!;
    return edgeType(e) === edgeTypes.indexOf('element') || edgeType(e) === edgeTypes.indexOf('hidden')
      ? `[${nameOrIndex}]`
      : (names[nameOrIndex] ?? '?');
  }
  return '(indirect)';
}
process.stdout.write(`\ninside the larger ${[...expand].join(', ')} objects (retained by each property)\n`);
for (const [parent, list] of [...children].sort((a, b) => retained[b[0]]! - retained[a[0]]!)) {
  if (retained[parent]! < 1e6) continue;
  const chain: string[] = [];
  for (let d = idom[parent]!, i = 0; d !== root && i < 2; d = idom[d]!, i++) chain.push(label(d));
  process.stdout.write(`${mb(retained[parent]!)}  ${label(parent)} ← ${chain.join(' ← ')}\n`);
  const byEdge = new Map<string, { size: number; count: number }>();
  for (const child of list) {
    const key = `${edgeName(parent, child)}: ${classOf(post[child]!)}`;
    const entry = byEdge.get(key) ?? { size: 0, count: 0 };
    entry.size += retained[child]!;
    entry.count++;
    byEdge.set(key, entry);
  }
  for (const [key, { size, count }] of [...byEdge].sort((a, b) => b[1].size - a[1].size).slice(0, 12)) {
    if (size < 2e5) continue;
    process.stdout.write(`    ${mb(size)}  ${count > 1 ? `${count} × ` : ''}${key}\n`);
  }
}

// Every byte attributed to the nearest dominating "owner" (a cache, a reflector, the pod directory…), by class: the
// whole heap in one table, including what no single owner dominates (shared between several: "(shared)").
const OWNERS = new Set(['ListingCache', 'Reflector', 'PodDirectory', 'NodeAllocationIndex', 'Metrics', 'Registry']);
const ownerOf = new Int32Array(reachable).fill(-1);
for (let b = root - 1; b >= 0; b--) {
  // parents come later in postorder: walk from the root down (reverse postorder)
  const parent = idom[b]!;
  if (parent < 0) continue;
  ownerOf[b] = OWNERS.has(classOf(post[parent]!)) ? parent : parent === root ? -1 : ownerOf[parent]!;
}
const attributed = new Map<string, Map<string, number>>();
for (let b = 0; b < root; b++) {
  const owner = ownerOf[b]! >= 0 ? label(ownerOf[b]!) : OWNERS.has(classOf(post[b]!)) ? label(b) : '(shared)';
  let byClass = attributed.get(owner);
  if (!byClass) attributed.set(owner, (byClass = new Map()));
  const key = classOf(post[b]!);
  byClass.set(key, (byClass.get(key) ?? 0) + selfOf(post[b]!));
}
process.stdout.write('\nself sizes by owner (nearest dominating cache, reflector or directory) and class\n');
for (const [owner, byClass] of [...attributed].sort(
  (a, b) => [...b[1].values()].reduce((x, y) => x + y, 0) - [...a[1].values()].reduce((x, y) => x + y, 0),
)) {
  const sum = [...byClass.values()].reduce((x, y) => x + y, 0);
  if (sum < 1e6) continue;
  process.stdout.write(`${mb(sum)}  ${owner}\n`);
  for (const [key, size] of [...byClass].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
    if (size >= 5e5) process.stdout.write(`    ${mb(size)}  ${key}\n`);
  }
}
