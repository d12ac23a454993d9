#!/usr/bin/env node
// The command line of @browser-service/server; everything lives in dist/app/cli.js.
import { runCli } from "../dist/app/cli.js";

const code = await runCli(process.argv.slice(2));
// The server keeps the event loop alive on its own; other commands end here.
if (code !== 0) process.exit(code);
