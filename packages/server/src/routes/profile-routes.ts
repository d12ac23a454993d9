import type { FastifyInstance } from "fastify";
import { NotFoundError } from "../http/api-errors.js";
import { pageOf, setPageHeaders } from "../http/paging.js";
import type { BodyOf } from "../http/request-validation.js";
import { newProfile, type Profile, type ProfileStore } from "../profiles/profile-store.js";
import type { ApiDeps } from "./api-deps.js";

/** The project's profile of this id or name, or 404 `not_found`. */
async function profileOf(store: ProfileStore, projectId: string, idOrName: string): Promise<Profile> {
  const profile = await store.get(projectId, idOrName);
  if (profile === undefined) throw new NotFoundError(`No profile has the id or name ${JSON.stringify(idOrName)} in this project.`);
  return profile;
}

/** `/profiles`: records of saved browser state, and the state itself as a tar archive. */
export function registerProfileRoutes(app: FastifyInstance, { stores, profileStates }: ApiDeps): void {
  app.get("/profiles", { config: { operationId: "listProfiles" } }, async (request, reply) => {
    const query = request.query as { offset?: number; limit?: number; name?: string; query?: string };
    const { offset, limit } = pageOf(query);
    const page = await stores.profiles.list((await request.scope.project()).id, { offset, limit, name: query.name, query: query.query });
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    return page.items;
  });

  app.post<{ Body: BodyOf<"createProfile"> | undefined }>("/profiles", { config: { operationId: "createProfile" } }, async (request, reply) => {
    const body = request.body ?? {};
    const profile = newProfile(body.name);
    await stores.profiles.insert((await request.scope.project()).id, profile);
    return reply.code(201).send(profile);
  });

  app.get<{ Params: { id_or_name: string } }>("/profiles/:id_or_name", { config: { operationId: "getProfile" } }, async (request) =>
    profileOf(stores.profiles, (await request.scope.project()).id, request.params.id_or_name),
  );

  app.patch<{ Params: { id_or_name: string }; Body: BodyOf<"updateProfile"> }>(
    "/profiles/:id_or_name",
    { config: { operationId: "updateProfile" } },
    async (request) => {
      const projectId = (await request.scope.project()).id;
      const found = await profileOf(stores.profiles, projectId, request.params.id_or_name);
      const renamed = await stores.profiles.rename(projectId, found.id, request.body.name);
      if (renamed === undefined) throw new NotFoundError(`The profile ${found.id} was deleted meanwhile.`);
      return renamed;
    },
  );

  app.delete<{ Params: { id_or_name: string } }>("/profiles/:id_or_name", { config: { operationId: "deleteProfile" } }, async (request, reply) => {
    const projectId = (await request.scope.project()).id;
    const found = await profileOf(stores.profiles, projectId, request.params.id_or_name);
    if (!(await stores.profiles.delete(projectId, found.id))) throw new NotFoundError(`The profile ${found.id} was deleted meanwhile.`);
    return reply.code(204).send();
  });

  app.get<{ Params: { id_or_name: string } }>("/profiles/:id_or_name/download", { config: { operationId: "downloadProfile" } }, async (request, reply) => {
    const projectId = (await request.scope.project()).id;
    const profile = await profileOf(stores.profiles, projectId, request.params.id_or_name);
    const archive = await profileStates.archive(projectId, profile.id);
    return reply
      .header("content-type", "application/x-tar")
      .header("content-disposition", `attachment; filename="${profile.name ?? profile.id}.tar"`)
      .send(archive);
  });
}
