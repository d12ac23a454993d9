import { readFileSync } from "node:fs";
import { ConfigError } from "../config.js";
import type { ChromiumUser } from "./chromium-launcher.js";

/**
 * The account named by `--chromium-user` (a name from `/etc/passwd`, or a numeric uid),
 * checked: the server must be root to start processes as another account, and Chromium
 * must never run as root through this setting.
 */
export function resolveChromiumUser(nameOrUid: string, passwd: string = readFileSync("/etc/passwd", "utf8"), serverUid: number | undefined = process.getuid?.()): ChromiumUser {
  if (serverUid !== 0) throw new ConfigError(`--chromium-user needs a server running as root (this one runs as uid ${serverUid ?? "unknown"}); without root, Chromium already runs as the server's own account, sandboxed.`);
  for (const line of passwd.split("\n")) {
    const [name, , uid, gid] = line.split(":");
    if (name === undefined || uid === undefined || gid === undefined) continue;
    if (name === nameOrUid || uid === nameOrUid) {
      const user = { uid: Number(uid), gid: Number(gid) };
      if (!Number.isInteger(user.uid) || !Number.isInteger(user.gid)) break;
      if (user.uid === 0) throw new ConfigError(`--chromium-user ${nameOrUid} is root; name an unprivileged account such as nobody.`);
      return user;
    }
  }
  throw new ConfigError(`--chromium-user ${nameOrUid} names no account in /etc/passwd.`);
}
