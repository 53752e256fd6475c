/**
 * The layering of src/ (docs/architecture.md), as dependency-cruiser rules: base code imports
 * only base code; plumbing imports base code and plumbing; features import base, plumbing and
 * other features; only the composition root (app.ts, main.ts) imports everything. No cycles
 * anywhere. test/architecture.test.ts runs these rules on every `make test`, type-only imports
 * included (a type is a dependency too).
 */
const BASE = "^src/((config|dev-secrets|errors|fields|logger|paging|batches|limits|time-zone)\\.ts$|db/)";
const PLUMBING =
  "^src/((edge|rest|rpc)/|(server|observe|request-id|metrics|readiness|cluster|entry-points|http-types)\\.ts$)";
const COMPOSITION = "^src/((app|main)\\.ts|start\\.mjs)$";
const FEATURE = "^src/[^/]+/";

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "An import cycle: the modules cannot be understood, or loaded, one before the other.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "base-imports-base",
      severity: "error",
      comment: "Base code (config, errors, logger, fields, db/ …) imports no plumbing, feature or composition.",
      from: { path: BASE },
      // The one exception: a migration runs the SQL text a feature keeps beside its code (a
      // `*.sql.ts` file, such as intake/intake-guard.sql.ts: the intake pipeline's last stage).
      // Such a file is text and nothing else (the rule below), so db/ still reaches no feature code.
      to: { path: "^src/", pathNot: [BASE, "^src/[^/]+/[^/]+\\.sql\\.ts$"] },
    },
    {
      name: "sql-text-imports-nothing",
      severity: "error",
      comment: "A *.sql.ts file holds SQL text for a migration and imports nothing.",
      from: { path: "\\.sql\\.ts$" },
      to: {},
    },
    {
      name: "plumbing-imports-no-feature",
      severity: "error",
      comment:
        "Plumbing (edge/, rest/, rpc/, server, observe …) imports base and plumbing only: a feature registers what plumbing needs.",
      from: { path: PLUMBING },
      to: { path: "^src/", pathNot: `${BASE}|${PLUMBING}` },
    },
    {
      name: "only-composition-imports-composition",
      severity: "error",
      comment: "Only main.ts imports app.ts.",
      from: { path: "^src/", pathNot: COMPOSITION },
      to: { path: COMPOSITION },
    },
    {
      name: "rest-and-rpc-apart",
      severity: "error",
      comment: "The REST and RPC edges never import each other; what both need lives in edge/.",
      from: { path: "^src/rest/" },
      to: { path: "^src/rpc/" },
    },
    {
      name: "rpc-and-rest-apart",
      severity: "error",
      from: { path: "^src/rpc/" },
      to: { path: "^src/rest/" },
    },
    {
      name: "domain-knows-no-transport",
      severity: "error",
      comment:
        "Services, repositories and rules import no HTTP, Connect or generated code: only edges (*.rest.ts, *.rpc.ts, *.http.ts, rest/, rpc/, edge/) do.",
      from: {
        path: FEATURE,
        pathNot: ["\\.(rest|rpc|http)\\.ts$", "^src/(edge|rest|rpc|db)/", "^src/[^/]+/fast/"],
      },
      // dependency-cruiser names a core module without its `node:` prefix (`http`, `http2`), so
      // the pattern takes both spellings: `^node:http2?$` alone never matched anything.
      to: {
        path: ["^generated/", "node_modules/(express|@connectrpc|express-openapi-validator)/", "^(node:)?http2?$"],
      },
    },
  ],
  options: {
    // generated/ is not cruised into, but stays in the graph: excluding generated/openapi (as
    // this file first did) hid a service's import of the contract's types from the rule above.
    doNotFollow: { path: ["node_modules", "^generated/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
