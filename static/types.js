// The documents that cross a boundary of the page's rooms, written once as JSDoc types for TypeScript's
// checker (tsconfig.json: checkJs, nothing emitted, nothing bundled: no module imports this file at run time).
// A function at a boundary names them, e.g. `@param {import("../types.js").Trace} trace`, and a wrong field
// name (trace.source_token) is an error of `npx tsc -p tsconfig.json` (tests/codebase/test_js_types.py).
//
// Where each comes from: the trace from the server (app/serving/trace_bytes.py, decoded by static/js/compact.js) or
// from the engine in the page (static/compute/trace.js computeTrace); the recipe from GET /api/live; the scene's
// structure from scene/structure.py (the static build's /site/scene/… files); the live figures and the scene
// from static/compute/page_parts.js withPageParts. Fields the page does not read may be left out of a type;
// a field it reads must be here.

/** A node's values as the page holds them: a float32 node's a Float32Array (−∞ as −Infinity), integer and
 *  bool nodes plain arrays, as JSON gives them.
 *  @typedef {Float32Array | number[] | boolean[]} NodeValues */

/** One recorded node of the graph (ONNX-named: op, inputs, attrs).
 *  @typedef {object} TraceNode
 *  @property {string} id
 *  @property {string} op
 *  @property {string[]} inputs
 *  @property {Record<string, any>} [attrs]
 *  @property {number[]} shape
 *  @property {string} dtype
 *  @property {NodeValues} data */

/** The number asked, its English and the model's German (recorder/documents.py Trace.header's `input`).
 *  @typedef {object} TraceInput
 *  @property {number} number
 *  @property {string[]} english
 *  @property {string[]} german_pieces
 *  @property {string} german
 *  @property {string[]} reference_pieces
 *  @property {boolean} correct */

/** One decoder layer under the logit lens: its probabilities' node and each position's top pieces.
 *  @typedef {object} LensLayer
 *  @property {number} layer
 *  @property {string} probs
 *  @property {{piece: string, p: number}[][]} [top] */

/** The live figures of one trace, keyed as the server's `derived` block (static/compute/derived.js).
 *  @typedef {Record<string, any>} LiveFigures */

/** The trace document (app/documents/schemas.py ServedTraceHeader's fields, then the nodes), with the page's parts
 *  (`derived`, `scene`) once withPageParts has added them.
 *  @typedef {object} Trace
 *  @property {string} format
 *  @property {string} weights_version
 *  @property {TraceInput} input
 *  @property {string[]} source_tokens
 *  @property {string[]} target_tokens
 *  @property {string[]} output_tokens
 *  @property {any} [memory]
 *  @property {string[]} [parameters]
 *  @property {string[]} ablation
 *  @property {LensLayer[]} lens
 *  @property {string} model
 *  @property {number | null} [checkpoint]
 *  @property {string} [weights_url]
 *  @property {TraceNode[]} nodes
 *  @property {LiveFigures} [derived]
 *  @property {Scene} [scene]
 *  @property {{head: number, row: number} | null} [worked_asked]  the worked row the reader chose (page_parts.js) */

/** What the live figures read (GET /api/live): which nodes, the model's constants, the sentence table.
 *  @typedef {object} Recipe
 *  @property {string} [format]
 *  @property {Record<string, any>} nodes
 *  @property {Record<string, any>} [names]
 *  @property {Record<string, any> & {vocabulary: string[], eos: string}} constants
 *  @property {Record<string, any>} [parameters_exercise]
 *  @property {Record<string, any>} sentences
 *  @property {Record<string, any>} [topics] */

/** A drawn block of the scene (scene/layout.py): its node, place and size in cells.
 *  @typedef {{id: string, op?: string, kind?: string, rows: number, cols: number, x: number, y: number,
 *    w: number} & Record<string, any>} SceneBlock */

/** A step of the tour as the scene holds it.
 *  @typedef {{step: number, marks: any[], overlay?: {name: string} | null} & Record<string, any>} SceneStep */

/** A part's switch (its gate): `off` says whether this trace has it switched off.
 *  @typedef {{id: string, off?: boolean} & Record<string, any>} SceneSwitch */

/** What the stage draws for one input: the structure's scene with the input's own parts added.
 *  @typedef {object} Scene
 *  @property {string} format
 *  @property {Record<string, any>} cell
 *  @property {Record<string, any>} palette
 *  @property {SceneBlock[]} blocks
 *  @property {SceneStep[]} steps
 *  @property {any[]} connectors
 *  @property {any[]} labels
 *  @property {SceneSwitch[]} switches
 *  @property {Record<string, string[]>} [axes]
 *  @property {Record<string, string[]>} [row_names]
 *  @property {any} [worked]
 *  @property {any[]} [slices]
 *  @property {any[]} [stations]
 *  @property {any[]} [bounds]
 *  @property {any[]} [lens]
 *  @property {Record<string, any>} [config]
 *  @property {Record<string, any>} [overview]
 *  @property {Record<string, any>} [camera]
 *  @property {number} [cells] */

/** The rules for an input's own parts of the scene (the structure's `personal`).
 *  @typedef {object} ScenePersonal
 *  @property {string[]} vocab
 *  @property {Record<string, any>} row_names
 *  @property {Record<string, any>} threads
 *  @property {Record<string, any>} token_labels
 *  @property {Record<string, any>} worked
 *  @property {Record<string, any>} windows */

/** One shape's structure (scene/structure.py): the scene without the input, and the rules for its parts.
 *  @typedef {object} SceneStructure
 *  @property {string} [format]
 *  @property {string} [model]
 *  @property {number} [n]
 *  @property {number} [m]
 *  @property {Scene} scene
 *  @property {ScenePersonal} personal */

/** The API's documents, from the server or the static folder (static/js/api.js keptDocuments, a test's).
 *  @typedef {{json: (url: string) => Promise<any>, bytes: (url: string) => Promise<ArrayBuffer>}} Fetcher */

/** A cell named by its tensor coordinates (the stage's explained cell and a cell asked of it, static/js/store.js
 *  explainedCell and askedCell; `panel: false` lights its inputs with the panel left closed).
 *  @typedef {{id: string, row: number, col: number, panel?: boolean}} CellAddress */

/** The step in view (static/js/store.js stepInView).
 *  @typedef {{step: number}} StepDetail */

/** window.anatomy: what the article or the embed view holds, for the tests and the console: the values of
 *  static/js/store.js's stores, read-only (store.js pageView), the stores themselves, and the page's functions,
 *  added by its modules.
 *  @typedef {object} PageState
 *  @property {Trace | null} trace  store.js shownTrace
 *  @property {number | null} step
 *  @property {StepDetail | null} stepDetail
 *  @property {Trace | null} compareTrace
 *  @property {CellAddress | null} cell  the cell the stage explains
 *  @property {CellAddress | null} cellDetail  the cell last asked of the stage
 *  @property {Record<string, any> | null} model  the model's document (GET /api/model: its figures)
 *  @property {string | null} checkpoint
 *  @property {string[]} ablation  the trace's
 *  @property {boolean} ready  a trace is on show
 *  @property {string} source
 *  @property {boolean} offlineReady
 *  @property {Record<string, any>} stores
 *  @property {(step: string | number | null) => Promise<boolean>} [setCheckpoint]
 *  @property {(n: number) => void} [goTo]
 *  @property {(input: string | null) => Promise<any>} [compareWith]
 *  @property {(parts: string[]) => Promise<any>} [ablate]
 *  @property {Record<string, any>} [handout]
 *  @property {Record<string, any>} [present]
 *  @property {() => any[]} [exercises]
 *  @property {() => {src: string, code: string}} [embedCode]
 *  @property {(input: string) => Promise<boolean>} [keepForOffline] */

/** window.anatomyStage (static/stage/main.js; its members as static/stage/README.md lists them): the stage for
 *  the page, the tests and the console.
 *  @typedef {object} StageApi
 *  @property {boolean} ready
 *  @property {string | null} error
 *  @property {Record<string, number> | null} stats
 *  @property {import("./stage/stage.js").Stage | null} stage
 *  @property {number} traceCount
 *  @property {TraceInput} [input]
 *  @property {() => SceneStep[]} [steps]
 *  @property {(detail: number | StepDetail) => void} [step]
 *  @property {() => void} [returnToStep]
 *  @property {() => void} [close]
 *  @property {(steps?: number[], onStep?: (step: number, done: number) => void) => Promise<any[] | null>} [pictures]
 *  @property {(...args: any[]) => any} [inspect]
 *  @property {(...args: any[]) => any} [project] */

export {};
