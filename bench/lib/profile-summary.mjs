// Reads a V8 .cpuprofile (node --cpu-prof) and says where the time went: self time by
// package (or by file of the service), and the functions that took the most.
import { readFileSync } from 'node:fs';

function placeOf({ url, functionName }) {
  if (!url) return functionName; // (garbage collector), (program), (idle), (root)
  const path = url.replace(/^file:\/\//, '');
  const pkg = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1];
  if (path.startsWith('node:')) return path.split('/').slice(0, 2).join('/');
  const own = /\/dist\/(src\/.*)\.js$/.exec(path);
  if (own) return own[1];
  return path;
}

export function summariseProfile(file, { top = 15 } = {}) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const places = new Map();
  const functions = new Map();
  let busy = 0;
  for (const [id, micros] of self) {
    const { callFrame } = byId.get(id);
    if (callFrame.functionName === '(idle)') continue;
    busy += micros;
    const place = placeOf(callFrame);
    places.set(place, (places.get(place) ?? 0) + micros);
    const fn = `${callFrame.functionName || '(anonymous)'} ${place}:${callFrame.lineNumber + 1}`;
    functions.set(fn, (functions.get(fn) ?? 0) + micros);
  }
  const share = (micros) => `${((micros / busy) * 100).toFixed(1).padStart(5)}%`;
  const list = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => `  ${share(micros)}  ${name}`)
      .join('\n');
  return `busy ${(busy / 1e6).toFixed(1)} s of CPU\nself time by package / file:\n${list(places)}\nfunctions:\n${list(functions)}`;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  for (const file of process.argv.slice(2)) console.log(`${file}\n${summariseProfile(file, { top: 25 })}\n`);
}
