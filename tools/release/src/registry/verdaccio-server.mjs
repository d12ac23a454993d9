// The child process of startLocalRegistry: Verdaccio 6 on 127.0.0.1, port chosen by the
// system, storage and users in the folder named on the command line, and no uplinks, so
// that it serves only what was published to it (nothing proxied from npm).
//
//   node verdaccio-server.mjs <dir>   prints "verdaccio listening on http://127.0.0.1:<port>/"
import { join } from "node:path";
import verdaccio from "verdaccio";

const dir = process.argv[2];
if (!dir) throw new Error("usage: node verdaccio-server.mjs <dir>");

// The parent holds our stdin open; when it goes away, even killed, so does the registry.
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();

const noUplink = { access: "$all", publish: "$authenticated", unpublish: "$authenticated" };
const app = await verdaccio.runServer({
  self_path: join(dir, "config.yaml"),
  storage: join(dir, "storage"),
  // One account, created by the parent through the registry's own user API.
  auth: { htpasswd: { file: join(dir, "htpasswd"), max_users: 1 } },
  uplinks: {},
  packages: { "@*/*": noUplink, "**": noUplink },
  // The web UI and npm audit's endpoint (which proxies to npmjs.org) are not needed.
  web: { enable: false },
  middlewares: { audit: { enabled: false } },
  log: { type: "stdout", format: "json", level: "warn" },
  // The server package's tarball, base64-encoded in the publish request, is over the 10 MB default.
  max_body_size: "200mb",
});
app.listen(0, "127.0.0.1", () => {
  console.log(`verdaccio listening on http://127.0.0.1:${app.address().port}/`);
});
