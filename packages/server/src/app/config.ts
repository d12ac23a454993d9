import { parseArgs } from "node:util";
import { type AnySetting, ConfigError, SETTINGS, type ServerConfig, settingsHelp } from "./settings.js";

export {
  ConfigError,
  DEFAULT_CONFIG,
  isAdvertiseUrl,
  isPostgresUrl,
  NODE_ID_PATTERN,
  type ServerConfig,
} from "./settings.js";

/** What `--help` prints. */
export const HELP_TEXT = `Usage:
  browser-service-server [options]                               run the server
  browser-service-server keys create [--project <id>] [options]  issue an API key and print it

Options (a flag beats its environment variable):
${settingsHelp()}
  --project <id>        (keys create) scope the new key to this project; org-wide without it
  -h, --help                                               print this help

Chromium for POST /browsers: CHROMIUM_PATH, else /usr/bin/chromium. Log level: LOG_LEVEL (default info).
On the first start with an empty data directory the server creates an organization, a
project named Default and an org-wide API key, and prints the key once.`;

/** What the command line asks for. */
export type Command = { kind: "help" } | { kind: "serve"; config: ServerConfig } | { kind: "keys-create"; config: ServerConfig; project: string | undefined };

/** A setting's value from its flag, else its environment variable (empty counts as unset), else its default. */
function settingValue(each: AnySetting, flagValue: string | boolean | undefined, env: NodeJS.ProcessEnv): unknown {
  if (typeof flagValue === "boolean") return flagValue;
  if (flagValue !== undefined) return each.parse.read(flagValue, `--${each.flag}`);
  const raw = env[each.env];
  return raw === undefined || raw === "" ? each.default : each.parse.read(raw, each.env);
}

/** Reads the command line and environment into a {@link Command}; bad input is a {@link ConfigError}. */
export function parseCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...Object.fromEntries(SETTINGS.map((each: AnySetting) => [each.flag, { type: each.arg === undefined ? ("boolean" as const) : ("string" as const) }])),
        project: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}. Run with --help to see the options.`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };
  const config = Object.fromEntries(
    SETTINGS.map((each: AnySetting) => [each.key, settingValue(each, (values as Record<string, string | boolean | undefined>)[each.flag], env)]),
  ) as unknown as ServerConfig;

  if (config.advertiseUrl !== undefined && config.nodeSecret === undefined) {
    throw new ConfigError("--advertise-url needs --node-secret (BROWSER_SERVICE_NODE_SECRET), the secret every node shares.");
  }
  if (config.nodeSecretAccept !== undefined && config.nodeSecret === undefined) {
    throw new ConfigError("--node-secret-accept needs --node-secret (BROWSER_SERVICE_NODE_SECRET): it is accepted beside the secret, during a rotation.");
  }
  if ((config.advertiseUrl !== undefined || config.nodeSecret !== undefined) && config.database === undefined) {
    throw new ConfigError("--advertise-url and --node-secret need --database: nodes share one PostgreSQL database.");
  }

  if (positionals.length === 0) {
    if (values.project !== undefined) throw new ConfigError("--project only applies to `keys create`.");
    return { kind: "serve", config };
  }
  if (positionals.length === 2 && positionals[0] === "keys" && positionals[1] === "create") {
    return { kind: "keys-create", config, project: values.project };
  }
  throw new ConfigError(`Unknown command "${positionals.join(" ")}"; the commands are the server itself and \`keys create\`. Run with --help.`);
}
