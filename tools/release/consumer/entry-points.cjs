// CommonJS users of the ESM-only packages: Node 20.19+, 22.12+ and 24 load them with
// require(). Prints, as JSON, the export names each specifier given on the command line has.
const exportNames = {};
for (const specifier of process.argv.slice(2)) exportNames[specifier] = Object.keys(require(specifier)).sort();
console.log(JSON.stringify(exportNames));
