// The same as entry-points.cjs through import, for comparison: each specifier given on
// the command line and its export names, as JSON.
const exportNames = {};
for (const specifier of process.argv.slice(2)) {
  const loaded = specifier.endsWith(".json") ? (await import(specifier, { with: { type: "json" } })).default : await import(specifier);
  exportNames[specifier] = Object.keys(loaded).sort();
}
console.log(JSON.stringify(exportNames));
