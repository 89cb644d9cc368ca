// Summarises a V8 heap snapshot (bench/service.js writes one on 'heap-snapshot'): self size by kind of object
// and by constructor, and the source files whose compiled code and closures take the most.
//
//   node bench/heap-summary.js Heap-….heapsnapshot [--top=25]
import { readFileSync } from 'node:fs';
import process from 'node:process';

const file = process.argv[2];
const top = Number(process.argv.find((arg) => arg.startsWith('--top='))?.slice(6) ?? 25);
const snapshot = JSON.parse(readFileSync(file, 'utf8'));
const {
  node_fields: fields,
  node_types: [types],
} = snapshot.snapshot.meta;
const width = fields.length;
const at = (name) => fields.indexOf(name);
const [TYPE, NAME, SIZE] = [at('type'), at('name'), at('self_size')];
const byType = new Map();
const byName = new Map();
let total = 0;
for (let i = 0; i < snapshot.nodes.length; i += width) {
  const type = types[snapshot.nodes[i + TYPE]];
  const size = snapshot.nodes[i + SIZE];
  const name = snapshot.strings[snapshot.nodes[i + NAME]];
  total += size;
  byType.set(type, (byType.get(type) ?? 0) + size);
  const key =
    type === 'object' || type === 'closure' || type === 'code' ? `${type} ${name.slice(0, 80)}` : type;
  byName.set(key, (byName.get(key) ?? 0) + size);
}
const mib = (bytes) => (bytes / 1048576).toFixed(1).padStart(6);
const show = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, size]) => `${mib(size)} MiB  ${name}`)
    .join('\n');
process.stdout.write(
  `total self size ${mib(total)} MiB\n\nby kind:\n${show(byType)}\n\nby constructor:\n${show(byName)}\n`,
);
