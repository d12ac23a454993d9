import { type SchemaCase, schemaRef } from "./types.js";

const at = (name: string, value: unknown, valid: boolean, rule: string): SchemaCase => ({ schema: schemaRef(name), rule, value, valid });

const profile = {
  id: "prof_1",
  name: "shop-session",
  created_at: "2026-11-01T09:30:00Z",
  updated_at: "2026-11-01T09:30:00Z",
  last_used_at: null,
  size_bytes: 0,
  last_save_error: null,
};

/** Profiles: records, creates, renames, and how a browser names and shows one. */
export const profileCases: readonly SchemaCase[] = [
  at("Profile", profile, true, "a new profile"),
  at("Profile", { ...profile, name: null, last_used_at: "2026-11-02T10:00:00Z", size_bytes: 10_485_760 }, true, "unnamed, used, saved"),
  at("Profile", { ...profile, size_bytes: -1 }, false, "size_bytes is not negative"),
  at(
    "Profile",
    { ...profile, last_save_error: { code: "profile_too_large", message: "70 MiB", browser_id: "brw_1", at: "2026-11-02T10:00:00Z" } },
    true,
    "a save given up",
  ),
  at("ProfileSaveError", { code: "profile_not_saved", message: "cut short", browser_id: "brw_1", at: "2026-11-02T10:00:00Z" }, true, "not saved"),
  at("ProfileSaveError", { code: "other", message: "x", browser_id: "brw_1", at: "2026-11-02T10:00:00Z" }, false, "code is one of two"),
  at("Profile", (({ last_used_at: _l, ...rest }) => rest)(profile), false, "last_used_at is required"),
  at("ProfileName", "shop-session", true, "name"),
  at("ProfileName", "shop session", false, "name pattern"),
  at("ProfileName", "prof_aaaaaaaaaaaaaaaaaaaaaaaa", false, "not shaped like an id"),
  at("CreateProfileRequest", {}, true, "no name"),
  at("CreateProfileRequest", { name: "a" }, true, "a name"),
  at("CreateProfileRequest", { name: "" }, false, "an empty name"),
  at("CreateProfileRequest", { id: "prof_1" }, false, "no other properties"),
  at("UpdateProfileRequest", { name: "b" }, true, "a new name"),
  at("UpdateProfileRequest", {}, false, "the name is required"),
  at("BrowserProfileRef", { id: "prof_1" }, true, "by id"),
  at("BrowserProfileRef", { name: "shop-session", save_changes: true }, true, "by name, saving"),
  at("BrowserProfileRef", {}, false, "one of id or name"),
  at("BrowserProfileRef", { id: "prof_1", name: "shop-session" }, false, "not both"),
  at("BrowserProfileRef", { name: "shop-session", save_changes: "yes" }, false, "save_changes is a boolean"),
  at("BrowserProfile", { id: "prof_1", name: null, save_changes: false }, true, "shown on a browser"),
  at("BrowserProfile", { id: "prof_1", name: "x" }, false, "save_changes is required"),
];
