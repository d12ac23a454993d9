import type { BrowserServiceClient } from "@browser-service/client";

/** The browser a bridge serves. */
export interface BrowserTarget {
  /** Its id. */
  id: string;
  /** Its name, if it has one. */
  name: string | null;
  /** Whether the bridge created it (and so deletes it on exit unless kept). */
  created: boolean;
}

/** Which browser to serve: an existing one, or one to create. */
export type BrowserChoice = { browser: string } | { create: { name?: string; start_url?: string } };

/** Finds the existing browser (404 if there is none of that id or name), or creates one. */
export async function openBrowser(client: BrowserServiceClient, choice: BrowserChoice, projectId: string | undefined): Promise<BrowserTarget> {
  const options = projectId === undefined ? {} : { projectId };
  if ("browser" in choice) {
    const found = await client.browsers.get(choice.browser, options);
    return { id: found.id, name: found.name ?? null, created: false };
  }
  const made = await client.browsers.create(choice.create, options);
  return { id: made.id, name: made.name ?? null, created: true };
}
