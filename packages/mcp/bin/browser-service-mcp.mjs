#!/usr/bin/env node
// The browser-service-mcp command: an MCP server (stdio, or Streamable HTTP with --http)
// for the WebMCP tools of one browser service browser. `--help` lists every option.
import { main } from "../dist/cli.js";

process.exitCode = await main(process.argv.slice(2), process.env);
// Keep-alive sockets of the client must not hold the process open once the bridge is done.
process.exit();
