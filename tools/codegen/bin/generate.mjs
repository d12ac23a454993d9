#!/usr/bin/env node
// browser-service-codegen <types|validators|client> <out-dir>
import { resolve } from "node:path";
import { generators, loadDocument } from "../src/index.mjs";
import { writeFiles } from "../src/write.mjs";

const [target, outDir] = process.argv.slice(2);
const generate = generators[target];
if (!generate || !outDir) {
  console.error(`usage: browser-service-codegen <${Object.keys(generators).join("|")}> <out-dir>`);
  process.exit(2);
}
const files = await generate(loadDocument());
const written = writeFiles(resolve(outDir), files);
console.log(`codegen ${target}: ${written.length} files -> ${outDir}`);
