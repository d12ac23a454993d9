import { authConnectionCases } from "./auth-connections.js";
import { browserConfigCases } from "./browser-config.js";
import { credentialCases } from "./credentials.js";
import { managedAuthCases } from "./managed-auth.js";
import { platformCases } from "./platform.js";
import { profileCases } from "./profiles.js";
import type { SchemaCase } from "./types.js";
import { webmcpCases } from "./webmcp.js";

export type { SchemaCase } from "./types.js";

/** Every row of the rule table, across all areas of the spec. */
export const schemaCases: readonly SchemaCase[] = [
  ...managedAuthCases,
  ...authConnectionCases,
  ...browserConfigCases,
  ...platformCases,
  ...credentialCases,
  ...profileCases,
  ...webmcpCases,
];
