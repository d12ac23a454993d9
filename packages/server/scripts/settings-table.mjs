// Writes the README's table of settings from the settings table (src/app/settings.ts, as
// built in dist/): `pnpm --filter @browser-service/server settings-table` after a change
// to a setting; test/config.test.ts fails while the README says otherwise.
import { readFileSync, writeFileSync } from "node:fs";
import { settingsTable } from "../dist/app/settings.js";

const README = new URL("../README.md", import.meta.url);
const START = "<!-- settings: generated from src/app/settings.ts by `pnpm --filter @browser-service/server settings-table` -->";
const END = "<!-- settings end -->";
const text = readFileSync(README, "utf8");
const from = text.indexOf(START);
const to = text.indexOf(END);
if (from === -1 || to < from) throw new Error(`README.md has no ${START} ... ${END} block.`);
writeFileSync(README, `${text.slice(0, from + START.length)}\n${settingsTable()}\n${text.slice(to)}`);
