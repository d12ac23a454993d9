// The house rule `components-used`; rules/components-used.bad.yaml breaks it and nothing else.
import { locationKey } from "../support/nodes.js";

/**
 * Every component is used. The built-in `no-unused-components` cannot see an unused
 * component in this layout: `components.schemas.X: { $ref: components/schemas/X.yaml }`
 * counts as a use of the file it points at. Here a component is used when a `$ref`
 * other than its own declaration points at it (at its file or at `#/components/...`).
 */
export default function ComponentsUsed() {
  const kinds = {
    NamedSchemas: ["schemas", "Schema"],
    NamedParameters: ["parameters", "Parameter"],
    NamedResponses: ["responses", "Response"],
    NamedHeaders: ["headers", "Header"],
    NamedExamples: ["examples", "Example"],
    NamedRequestBodies: ["requestBodies", "RequestBody"],
    NamedLinks: ["links", "Link"],
    NamedCallbacks: ["callbacks", "Callback"],
    NamedPathItems: ["pathItems", "PathItem"],
  };
  const declared = []; // { kind, name, site, target, location }
  const refs = []; // [site, target]
  const visitor = {
    ref: {
      enter(_node, ctx, resolved) {
        if (resolved?.location) refs.push([locationKey(ctx.location), locationKey(resolved.location)]);
      },
    },
    Root: {
      leave(_root, ctx) {
        for (const component of declared) {
          const keys = new Set([component.site, component.target]);
          const used = refs.some(([site, target]) => site !== component.site && keys.has(target));
          if (used) continue;
          ctx.report({
            message:
              `Component \`${component.name}\` (components.${component.kind}) is never referenced. ` +
              "Reference it where it applies, or delete its entry in openapi.yaml and its file.",
            location: component.location,
          });
        }
      },
    },
  };
  for (const [mapType, [kind, itemType]] of Object.entries(kinds)) {
    visitor[mapType] = {
      [itemType]: {
        enter(_node, ctx) {
          const site = ctx.rawLocation ?? ctx.location;
          declared.push({ kind, name: String(ctx.key), site: locationKey(site), target: locationKey(ctx.location), location: site.key() });
        },
      },
    };
  }
  return visitor;
}
