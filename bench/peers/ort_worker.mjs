// ONNX Runtime worker of the peer benchmark: serves the JSON-lines protocol of
// PROTOCOL.md (load / run / stream / quit) with onnxruntime-node on the CPU
// execution provider. Started by the orchestrator as
//   node bench/peers/ort_worker.mjs --threads N
// (install its dependency first with bench/peers/install_peers.sh).
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import ort from 'onnxruntime-node';

const TYPED = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array };

const sessions = new Map(); // id -> InferenceSession

function parseThreads(argv) {
  const i = argv.indexOf('--threads');
  const n = i >= 0 ? Number(argv[i + 1]) : 1;
  if (!Number.isInteger(n) || n < 1) throw new Error(`bad --threads: ${argv[i + 1]}`);
  return n;
}

const threads = parseThreads(process.argv.slice(2));

function ortVersion() {
  if (ort.env?.versions?.node) return ort.env.versions.node;
  const require = createRequire(import.meta.url);
  return require('onnxruntime-node/package.json').version;
}

function reply(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function sessionOptions() {
  return {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  };
}

function elementCount(shape) {
  return shape.reduce((n, d) => n * d, 1);
}

// Reads one tensor's raw elements into a fresh typed array. The copy into a
// new ArrayBuffer keeps it aligned whatever the byte offset in the file.
function readTensor(t) {
  const Typed = TYPED[t.dtype];
  if (!Typed) throw new Error(`unsupported dtype ${t.dtype} for input ${t.name}`);
  if (!Array.isArray(t.shape)) throw new Error(`input ${t.name} has no shape`);
  const data = new Typed(elementCount(t.shape));
  const bytes = new Uint8Array(data.buffer);
  const fd = fs.openSync(t.file, 'r');
  try {
    const got = fs.readSync(fd, bytes, 0, bytes.length, t.offset ?? 0);
    if (got !== bytes.length) {
      throw new Error(`${t.file}: read ${got} of ${bytes.length} bytes for input ${t.name}`);
    }
  } finally {
    fs.closeSync(fd);
  }
  return new ort.Tensor(t.dtype, data, t.shape);
}

// Feeds for one call, built once and reused for every call of a request.
function buildFeeds(tensors) {
  if (!Array.isArray(tensors)) throw new Error('inputs must be a list of tensors');
  const feeds = {};
  for (const t of tensors) feeds[t.name] = readTensor(t);
  return feeds;
}

// Writes a call's outputs in the model's output order as raw files.
function writeOutputs(session, results, dir, prefix) {
  fs.mkdirSync(dir, { recursive: true });
  return session.outputNames.map((name, k) => {
    const t = results[name];
    if (!TYPED[t.type]) throw new Error(`unsupported output dtype ${t.type} for ${name}`);
    const file = path.join(dir, `${prefix}out${k}.bin`);
    const d = t.data;
    fs.writeFileSync(file, new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
    return { name, dtype: t.type, shape: Array.from(t.dims), file, offset: 0 };
  });
}

function micros(t0, t1) {
  return Number(t1 - t0) / 1000;
}

async function createSession(model) {
  if (typeof model !== 'string') throw new Error('model must be a path');
  return ort.InferenceSession.create(model, sessionOptions());
}

async function opLoad(req) {
  if (req.id === undefined) throw new Error('load needs an id');
  const t0 = process.hrtime.bigint();
  const session = await createSession(req.model);
  const t1 = process.hrtime.bigint();
  // Release the old session only once the new one exists, so a failing load
  // leaves the previous model of that id usable.
  const old = sessions.get(req.id);
  sessions.set(req.id, session);
  if (old) await old.release();
  return { load_us: micros(t0, t1) };
}

async function opRun(req) {
  const session = sessions.get(req.id);
  if (!session) throw new Error(`no model loaded under id ${req.id}`);
  const feeds = buildFeeds(req.inputs);
  const warmup = req.warmup ?? 0;
  const iters = req.iters ?? 1;
  let results = null;
  for (let i = 0; i < warmup; i++) results = await session.run(feeds);
  const times = [];
  for (let i = 0; i < iters; i++) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    const t1 = process.hrtime.bigint();
    times.push(micros(t0, t1));
  }
  const outputs = results ? writeOutputs(session, results, req.output_dir, '') : [];
  return { times_us: times, outputs };
}

async function opStream(req) {
  if (!Array.isArray(req.calls)) throw new Error('stream needs calls');
  const feeds = req.calls.map(buildFeeds);
  const start = process.hrtime.bigint();
  const session = await createSession(req.model);
  const created = process.hrtime.bigint();
  try {
    const callUs = [];
    const results = [];
    for (const f of feeds) {
      const t0 = process.hrtime.bigint();
      results.push(await session.run(f));
      callUs.push(micros(t0, process.hrtime.bigint()));
    }
    const end = process.hrtime.bigint();
    const outputs = results.map((r, i) => writeOutputs(session, r, req.output_dir, `call${i}_`));
    return {
      create_us: micros(start, created),
      call_us: callUs,
      total_us: micros(start, end),
      outputs,
    };
  } finally {
    await session.release();
  }
}

const OPS = { load: opLoad, run: opRun, stream: opStream };

async function handle(line) {
  if (!line.trim()) return;
  let req;
  try {
    req = JSON.parse(line);
    if (req.op === 'quit') {
      process.stdout.write(JSON.stringify({ ok: true }) + '\n', () => process.exit(0));
      await new Promise(() => {}); // hold the queue until the exit
    }
    const op = OPS[req.op];
    if (!op) throw new Error(`unknown op ${JSON.stringify(req.op)}`);
    reply({ ok: true, ...(await op(req)) });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`ort_worker: ${req?.op ?? 'request'} failed: ${msg}\n`);
    reply({ ok: false, error: msg });
  }
}

function main() {
  reply({
    ok: true,
    contender: 'onnxruntime',
    versions: { onnxruntime: ortVersion(), node: process.versions.node },
  });
  // Requests are chained so that each starts only after the previous reply.
  let queue = Promise.resolve();
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  rl.on('line', (line) => {
    queue = queue.then(() => handle(line));
  });
  rl.on('close', () => {
    queue.then(() => process.exit(0));
  });
}

main();
