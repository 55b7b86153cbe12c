#!/usr/bin/env node
// Cross-checks the committed driver components through an independent canonical-ABI
// implementation: jco transpiles each component to JS bindings, and every golden transcript in
// drivers/src/test/resources/golden/index.json is run through a fresh instance under batch
// splits 1, 2, 7 and 256, after `launch` with golden/launch-request.json. The events, turned into
// the canonical event JSON, must equal the golden file. It also calls describe, classify-exit,
// read-login and a refused launch once per driver, so every export's lifting is exercised.
//
// Usage: node drivers/tools/verify-components.mjs [components-dir]
// (default: drivers/src/main/resources/io/capsule/driver/builtin). Exit 0 all match, 1 otherwise.
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { transpile } from '@bytecodealliance/jco';

const module = join(dirname(fileURLToPath(import.meta.url)), '..');
const resources = join(module, 'src', 'test', 'resources');
const components = process.argv[2] ?? join(module, 'src', 'main', 'resources', 'io', 'capsule', 'driver', 'builtin');
const SPLITS = [1, 2, 7, 256];

const kebab = (name) => name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());

// jco's JS values → the canonical event JSON shared with the Java host.
function plain(value) {
  if (typeof value === 'bigint') return Number(value);
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Uint8Array) return Array.from(value);
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[kebab(k)] = plain(v);
    return out;
  }
  return value;
}

function eventJson(event) {
  const val = plain(event.val);
  if (val !== null && typeof val === 'object' && !Array.isArray(val)) return { type: event.tag, ...val };
  if (event.tag === 'quota') return { type: 'quota', windows: val };
  return { type: event.tag, value: val };
}

function launchRequest(json) {
  const bridge = json.bridge && {
    serverName: json.bridge['server-name'],
    url: json.bridge.url,
    bearerToken: json.bridge['bearer-token'],
    toolNames: json.bridge['tool-names'],
  };
  return {
    model: json.model ?? undefined,
    systemPrompt: json['system-prompt'],
    config: json.config ?? undefined,
    bridge: bridge ?? undefined,
    session: { id: json.session.id, mode: json.session.mode },
    harnessVersion: json['harness-version'] ?? undefined,
    task: json.task,
  };
}

async function load(driver, work) {
  const bytes = await readFile(join(components, `${driver}.wasm`));
  const { files } = await transpile(bytes, { name: driver, instantiation: 'async', noTypescript: true, quiet: true });
  const dir = join(work, driver);
  for (const [name, contents] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), contents);
  }
  const bindings = await import(pathToFileURL(join(dir, `${driver}.js`)).href);
  const cores = new Map();
  const getCoreModule = async (path) => {
    if (!cores.has(path)) cores.set(path, await WebAssembly.compile(await readFile(join(dir, path))));
    return cores.get(path);
  };
  // A fresh instance per run, as the runtime gives each run its own.
  return async () => (await bindings.instantiate(getCoreModule, {})).process;
}

function transcriptLines(text) {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  lines.pop();
  return lines;
}

async function main() {
  const index = JSON.parse(await readFile(join(resources, 'golden', 'index.json'), 'utf8'));
  const request = launchRequest(JSON.parse(await readFile(join(resources, 'golden', 'launch-request.json'), 'utf8')));
  const work = await mkdtemp(join(tmpdir(), 'verify-components-'));
  const failures = [];
  try {
    const instances = new Map();
    for (const entry of index) {
      if (!instances.has(entry.driver)) instances.set(entry.driver, await load(entry.driver, work));
      const fresh = instances.get(entry.driver);
      const lines = transcriptLines(
        await readFile(join(resources, 'transcripts', entry.transcripts, `${entry.name}.jsonl`), 'utf8'),
      );
      const expected = JSON.parse(
        await readFile(join(resources, 'golden', entry.driver, `${entry.name}.events.json`), 'utf8'),
      );
      for (const split of SPLITS) {
        const driver = await fresh();
        driver.launch(request);
        const events = [];
        for (let i = 0; i < lines.length; i += split) events.push(...driver.parse(lines.slice(i, i + split)));
        const actual = events.map(eventJson);
        const terminals = actual.filter((e) => e.type === 'turn-end' || e.type === 'turn-failed').length;
        if (!isDeepStrictEqual(actual, expected) || terminals !== entry['terminal-events']) {
          failures.push(`${entry.driver}/${entry.name} split ${split}:\n  got ${JSON.stringify(actual)}`);
        }
      }
    }
    for (const [name, fresh] of instances) {
      const driver = await fresh();
      const description = driver.describe();
      if (!description.binary) failures.push(`${name}: describe has no binary`);
      const exit = driver.classifyExit({ code: 1, signal: undefined, stderrTail: 'x', interrupted: true, sawTerminal: false });
      if (exit.tag !== 'turn-failed' || exit.val.kind !== 'canceled') failures.push(`${name}: classify-exit ${JSON.stringify(plain(exit))}`);
      const login = driver.readLogin({ exitCode: 1, stdout: '', stderr: 'Not logged in' });
      if (!['logged-in', 'logged-out', 'unknown'].includes(login.tag)) failures.push(`${name}: read-login ${login.tag}`);
      try {
        driver.launch({ ...request, config: '{"no_such_key":1}' });
        failures.push(`${name}: launch accepted an unknown config key`);
      } catch (err) {
        if (!String(err.payload ?? err.message).includes('no_such_key')) failures.push(`${name}: launch error ${err}`);
      }
      console.log(`${name}: describe, launch (ok and err), classify-exit and read-login lift`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  if (failures.length) {
    console.error(failures.join('\n'));
    return 1;
  }
  console.log(`verify-components: ${index.length} golden transcripts × ${SPLITS.length} splits match through jco's bindings`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
