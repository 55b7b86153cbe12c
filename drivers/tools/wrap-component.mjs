#!/usr/bin/env node
// Wraps a core WebAssembly module that exports murmur:driver/process@0.6.0 by the component-model
// naming convention into a component, using jco's JS API (its `jco embed` CLI panics here).
//
// Usage: node drivers/tools/wrap-component.mjs <core.wasm> <out.wasm>
//
// The WIT is always drivers/wit/murmur-driver-0.6.0.wit (next to this folder), world
// `process-driver`, so every component this script makes carries the same contract. The output is
// a pure function of the input bytes, the WIT and the pinned jco version (package-lock.json), which
// is what lets `build-drivers.sh --check` compare bytes. Exit codes: 0 written, 1 failed, 2 usage.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { componentEmbed, componentNew } from '@bytecodealliance/jco';

const WORLD = 'process-driver';
const WIT_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'wit', 'murmur-driver-0.6.0.wit');

async function main(argv) {
  if (argv.length !== 2) {
    process.stderr.write('usage: wrap-component.mjs <core.wasm> <out.wasm>\n');
    return 2;
  }
  const [input, output] = argv;
  const binary = new Uint8Array(await readFile(input));
  if (binary.length < 8 || binary[0] !== 0 || binary[1] !== 0x61 || binary[2] !== 0x73 || binary[3] !== 0x6d) {
    throw new Error(`${input} is not a WebAssembly binary`);
  }
  // Version 1 layer 0 is a core module; a component has layer 1 and needs no wrapping.
  if (binary[6] !== 0 || binary[7] !== 0) {
    throw new Error(`${input} is already a component, not a core module`);
  }
  const witSource = await readFile(WIT_FILE, 'utf8');
  const embedded = await componentEmbed({ binary, witSource, world: WORLD });
  const component = await componentNew(embedded);
  await writeFile(output, component);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`wrap-component: ${err && err.message ? err.message : err}\n`);
    process.exit(1);
  },
);
