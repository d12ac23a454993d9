import type { Credential } from "@browser-service/types";
import { limits } from "@browser-service/types";
import type { FastifyInstance } from "fastify";
import { CredentialSeals } from "../credentials/credential-seals.js";
import type { CredentialRow } from "../credentials/credential-store.js";
import { normalizeDomain } from "../credentials/domain-names.js";
import { parseTotpSecret, TotpSecretError, type TotpSettings, totpCode } from "../credentials/totp.js";
import { NotFoundError, TotpSecretMissingError } from "../http/api-errors.js";
import { pageOf, setPageHeaders } from "../http/paging.js";
import { type BodyOf, invalidRequest } from "../http/request-validation.js";
import { newId } from "../storage/ids.js";
import type { ApiDeps } from "./api-deps.js";

const MAX_VALUES = limits.schemas.CredentialValues.maxProperties;

/** The settings of a `totp_secret`, or a 400 naming `/totp_secret` (never its text). */
function totpOf(secret: string): TotpSettings {
  try {
    return parseTotpSecret(secret);
  } catch (error) {
    if (error instanceof TotpSecretError) throw invalidRequest([{ code: error.code, message: `/${error.message}` }]);
    throw error;
  }
}

/** The record the API shows: keys of the values, never the values; a code only when the secret was just set. */
function show(row: CredentialRow, justSet?: TotpSettings): Credential {
  const record: Credential = {
    id: row.id,
    name: row.name,
    domain: row.domain,
    sso_provider: row.sso_provider,
    has_values: row.value_keys.length > 0,
    value_keys: row.value_keys,
    has_totp_secret: row.totp_sealed !== null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
  if (justSet === undefined) return record;
  const { code, expires_at } = totpCode(justSet);
  return { ...record, totp_code: code, totp_code_expires_at: expires_at };
}

/** The values after an update: `remove` first, then `merge`; more than the cap is a 400 and nothing changes. */
function mergedValues(current: Record<string, string>, remove: readonly string[], merge: Readonly<Record<string, string>>): Record<string, string> {
  const next = { ...current };
  for (const key of remove) delete next[key];
  Object.assign(next, merge);
  const count = Object.keys(next).length;
  if (count > MAX_VALUES) {
    throw invalidRequest([{ code: "maxProperties", message: `/values would leave ${count} values stored; a credential holds at most ${MAX_VALUES}.` }]);
  }
  return next;
}

/** `/credentials`: login values per domain, sealed at rest, never returned. */
export function registerCredentialRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { stores } = deps;
  const vault = new CredentialSeals(deps.vault);
  const credentialOf = async (projectId: string, idOrName: string): Promise<CredentialRow> => {
    const row = await stores.credentials.get(projectId, idOrName);
    if (row === undefined) throw new NotFoundError(`No credential has the id or name ${JSON.stringify(idOrName)} in this project.`);
    return row;
  };

  app.get("/credentials", { config: { operationId: "listCredentials" } }, async (request, reply) => {
    const query = request.query as { offset?: number; limit?: number; domain?: string; query?: string };
    const { offset, limit } = pageOf(query);
    const page = await stores.credentials.list((await request.scope.project()).id, {
      offset,
      limit,
      domain: query.domain === undefined ? undefined : normalizeDomain(query.domain),
      query: query.query,
    });
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    return page.items.map((row) => show(row));
  });

  app.post<{ Body: BodyOf<"createCredential"> }>(
    "/credentials",
    { bodyLimit: limits.schemas.CreateCredentialRequest.maxBytes, config: { operationId: "createCredential" } },
    async (request, reply) => {
      const body = request.body;
      const totp = body.totp_secret === undefined ? undefined : totpOf(body.totp_secret);
      const project = await request.scope.project();
      const owner = { id: newId("credential"), project_id: project.id, domain: normalizeDomain(body.domain) };
      const now = new Date().toISOString();
      const row: CredentialRow = {
        ...owner,
        name: body.name,
        sso_provider: body.sso_provider ?? null,
        value_keys: Object.keys(body.values).sort(),
        values_sealed: vault.sealValues(owner, body.values),
        totp_sealed: totp === undefined ? null : vault.sealTotp(owner, totp),
        created_at: now,
        updated_at: now,
      };
      await stores.credentials.insert(row);
      return reply.code(201).send(show(row, totp));
    },
  );

  app.get<{ Params: { id_or_name: string } }>("/credentials/:id_or_name", { config: { operationId: "getCredential" } }, async (request) =>
    show(await credentialOf((await request.scope.project()).id, request.params.id_or_name)),
  );

  app.patch<{ Params: { id_or_name: string }; Body: BodyOf<"updateCredential"> }>(
    "/credentials/:id_or_name",
    { bodyLimit: limits.schemas.UpdateCredentialRequest.maxBytes, config: { operationId: "updateCredential" } },
    async (request) => {
      const body = request.body;
      const totp = body.totp_secret === undefined || body.totp_secret === "" ? undefined : totpOf(body.totp_secret);
      const projectId = (await request.scope.project()).id;
      const found = await credentialOf(projectId, request.params.id_or_name);
      const changesValues = body.values !== undefined || (body.remove_value_keys?.length ?? 0) > 0;
      const updated = await stores.credentials.update(projectId, found.id, (current) => {
        const values = changesValues ? mergedValues(vault.openValues(current), body.remove_value_keys ?? [], body.values ?? {}) : undefined;
        return {
          ...current,
          name: body.name ?? current.name,
          sso_provider: body.sso_provider === undefined ? current.sso_provider : body.sso_provider || null,
          value_keys: values === undefined ? current.value_keys : Object.keys(values).sort(),
          values_sealed: values === undefined ? current.values_sealed : vault.sealValues(current, values),
          totp_sealed: body.totp_secret === undefined ? current.totp_sealed : totp === undefined ? null : vault.sealTotp(current, totp),
          updated_at: new Date().toISOString(),
        };
      });
      if (updated === undefined) throw new NotFoundError(`The credential ${found.id} was deleted meanwhile.`);
      return show(updated, totp);
    },
  );

  app.delete<{ Params: { id_or_name: string } }>("/credentials/:id_or_name", { config: { operationId: "deleteCredential" } }, async (request, reply) => {
    const projectId = (await request.scope.project()).id;
    const found = await credentialOf(projectId, request.params.id_or_name);
    if (!(await stores.credentials.delete(projectId, found.id))) throw new NotFoundError(`The credential ${found.id} was deleted meanwhile.`);
    return reply.code(204).send();
  });

  app.get<{ Params: { id_or_name: string } }>("/credentials/:id_or_name/totp-code", { config: { operationId: "getCredentialTotpCode" } }, async (request) => {
    const row = await credentialOf((await request.scope.project()).id, request.params.id_or_name);
    const settings = vault.openTotp(row);
    if (settings === undefined) throw new TotpSecretMissingError(`The credential "${row.name}" has no TOTP secret; set totp_secret first.`);
    return totpCode(settings);
  });
}
