// Runs static/local/scene.js personalize under Node on what tests/test_local_scene.py wrote (structure documents and the
// server's traces, JSON bodies) and writes each case's scene. Usage: node local_scene_parity.mjs DIR
// Each structure is shared by the cases of its shape, frozen. Also draws the curves of curves.json. A case
// with `plant` has an error planted in its trace first: the first two source token ids swapped.
/* global process */  // run by Node (tests/test_local_scene.py)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beziers } from '../static/local/curves.js';
import { personalize } from '../static/local/scene.js';
import { pageTrace } from '../static/js/compact.js';

const dir = process.argv[2];
const read = name => JSON.parse(readFileSync(join(dir, name), 'utf8'));
// a structure is fetched once and personalized for every input of its shape: frozen, a write to it throws
const frozen = (x) => { if (x && typeof x === 'object') { Object.values(x).forEach(frozen); Object.freeze(x); } return x; };
const structures = {}, scenes = {};
for (const c of read('cases.json')) {
  structures[c.structure] ??= frozen(read(c.structure));
  const trace = pageTrace(read(c.trace));  // the JSON body in the page's form, as loadTrace gives a trace
  delete trace.scene;  // the server's scene is not the browser's to read
  if (c.plant) {
    const ids = trace.nodes.find(n => n.id === c.plant).data;
    [ids[0], ids[1]] = [ids[1], ids[0]];
  }
  scenes[c.name] = personalize(structures[c.structure], trace);  // one structure whatever is switched off
}
const curves = read('curves.json');  // curves whose points land on halves at 3 decimals
writeFileSync(join(dir, 'scenes.json'), JSON.stringify({ scenes, curves: beziers(curves.a, curves.c, curves.e, curves.n) }));
