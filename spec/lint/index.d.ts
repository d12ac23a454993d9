// Types of index.js (the plugin) for the TypeScript tests (the repository sets allowJs: false).
export declare const PLUGIN_ID: "house";
export declare const rules: Record<string, (options?: unknown) => Record<string, unknown>>;
declare function houseRulesPlugin(): {
  id: string;
  rules: { oas3: typeof rules };
  configs: { all: { rules: Record<string, "error"> } };
};
export default houseRulesPlugin;
