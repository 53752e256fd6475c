/**
 * The SDKs cover the provider's contract (docs/decisions/0036-client-sdks.md): every operation of
 * openapi.yaml secured by ProviderApiKey has a method in the TypeScript SDK's table
 * (sdks/typescript/src/operations.ts) and the PHP SDK's (sdks/php/src/Operations.php), with the
 * contract's method and path, and the method exists (a list's iterator too); every schema reachable
 * from those operations or from a webhook has an exported type alias in TypeScript and a place in
 * PHP's Schemas (an enum as a class whose constants are the contract's values); every problem code
 * has an error class in both; PHP knows every webhook event type. Operations under the other
 * security schemes are out of scope and listed here by scheme, with the reason; an operation under
 * a scheme this file does not know fails. The PHP files are read as text (no php needed here; the
 * PHP SDK's own ContractTest checks the same tables by reflection). A copy of the contract with a
 * provider operation and a schema added shows the check failing on them, so it is not vacuous.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { ERROR_CLASSES, LeadProvider, OPERATIONS } from "../../sdks/typescript/src/index.ts";
import type { Json } from "../helpers/app.ts";
import { ROOT, SPEC_FILE } from "../helpers/prism.ts";

const spec = YAML.parse(readFileSync(SPEC_FILE, "utf8")) as Json;
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const TS = join(ROOT, "sdks", "typescript", "src");
const PHP = join(ROOT, "sdks", "php", "src");

/** The security schemes the SDKs leave out, each with the reason. `none`: an operation without security. */
const OUT_OF_SCOPE: Readonly<Record<string, string>> = {
  AdminJwt: "the administrators' API (a JWT with the admin position): the back office and operators' tools",
  PortalSession: "the provider portal's own routes, called by the portal in a browser with a session cookie",
  PublishableKey: "the drop-in form's routes, called from a web page by the form's script with a publishable key",
  none: "no credential: health probes and the portal's sign-in and invitations",
};

interface Operation {
  readonly id: string;
  readonly http: string;
  readonly schemes: readonly string[];
  readonly node: Json;
}

function operationsOf(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined;
      if (!op) continue;
      const security = (op.security ?? doc.security ?? []) as Json[];
      const schemes = [...new Set(security.flatMap((requirement) => Object.keys(requirement)))];
      out.push({ id: op.operationId, http: `${method.toUpperCase()} ${path}`, schemes, node: op });
    }
  }
  return out;
}

/** The schemas a node reaches through $refs, followed through components of every kind. */
function reachable(doc: Json, roots: readonly unknown[]): Set<string> {
  const schemas = new Set<string>();
  const seen = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n);
      return;
    }
    if (!node || typeof node !== "object") return;
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith("#/components/")) {
        if (seen.has(value)) continue;
        seen.add(value);
        const [, , kind, name] = value.split("/") as [string, string, string, string];
        if (kind === "schemas") schemas.add(name);
        walk((doc.components as Json)[kind]?.[name]);
      } else {
        walk(value);
      }
    }
  };
  walk(roots);
  return schemas;
}

/** A `$ref`'d node, resolved inside the document. */
function resolve(doc: Json, node: Json | undefined): Json | undefined {
  const ref = node?.$ref as string | undefined;
  if (!ref?.startsWith("#/")) return node;
  return ref
    .slice(2)
    .split("/")
    .reduce((n: Json | undefined, part) => n?.[part], doc);
}

/**
 * Whether an operation answers one page of a cursor-paged list: it takes `page_token` and its
 * success body has `next_page_token`.
 */
function pagedList(doc: Json, op: Operation): boolean {
  const takesToken = ((op.node.parameters ?? []) as Json[]).some((p) => resolve(doc, p)?.name === "page_token");
  const status = Object.keys(op.node.responses ?? {}).find((s) => s.startsWith("2"));
  const response = resolve(doc, status ? op.node.responses[status] : undefined);
  const schema = resolve(doc, response?.content?.["application/json"]?.schema);
  return takesToken && schema?.properties?.next_page_token !== undefined;
}

/** The contract's scope for the SDKs: provider operations, the schemas they and the webhooks reach, the other operations by scheme. */
function providerScope(doc: Json) {
  const operations = operationsOf(doc);
  const provider = operations.filter((o) => o.schemes.includes("ProviderApiKey"));
  const others = operations.filter((o) => !o.schemes.includes("ProviderApiKey"));
  const webhooks = Object.values((doc.webhooks ?? {}) as Json).flatMap((item) =>
    METHODS.map((m) => (item as Json)[m]).filter(Boolean),
  );
  return {
    provider,
    others,
    schemas: reachable(doc, [...provider.map((o) => o.node), ...webhooks]),
    problemCodes: (doc.components.schemas.Problem.properties.code.enum ?? []) as string[],
    webhookTypes: Object.keys((doc.webhooks ?? {}) as Json),
  };
}

/** What an SDK offers, as read from its source. */
interface SdkTables {
  readonly name: string;
  readonly operations: Readonly<Record<string, { http: string; method: string; iterate?: string | undefined }>>;
  /** Whether a method (`leads.create`, `leads->create`) exists on a client. */
  readonly exists: (method: string) => boolean;
  /** Schemas with a type alias or a place in the schema list. */
  readonly schemas: ReadonlySet<string>;
  /** Enum schemas as the SDK has them: their values. */
  readonly enums: Readonly<Record<string, readonly string[]>>;
  readonly problemCodes: readonly string[];
  /** Webhook event types the SDK knows (undefined: derived from the contract's types). */
  readonly webhookTypes: readonly string[] | undefined;
}

/** Everything the contract asks of an SDK that it lacks, one line each; empty when it covers it. */
function gaps(doc: Json, sdk: SdkTables): string[] {
  const scope = providerScope(doc);
  const problems: string[] = [];
  const known = new Set(scope.provider.map((o) => o.id));
  for (const op of scope.provider) {
    const row = sdk.operations[op.id];
    if (!row) {
      problems.push(`${sdk.name}: ${op.id} (${op.http}) has no method in the SDK's operation table`);
      continue;
    }
    if (row.http !== op.http) problems.push(`${sdk.name}: ${op.id} is ${op.http}, the table says ${row.http}`);
    if (!sdk.exists(row.method)) problems.push(`${sdk.name}: ${op.id}'s method ${row.method} does not exist`);
    if (pagedList(doc, op) && !row.iterate) problems.push(`${sdk.name}: ${op.id} is a paged list without an iterator`);
    if (row.iterate && !sdk.exists(row.iterate))
      problems.push(`${sdk.name}: ${op.id}'s iterator ${row.iterate} does not exist`);
  }
  for (const id of Object.keys(sdk.operations)) {
    if (!known.has(id))
      problems.push(`${sdk.name}: the table names ${id}, which is no provider-key operation of the contract`);
  }
  for (const name of scope.schemas) {
    if (!sdk.schemas.has(name) && !(name in sdk.enums)) problems.push(`${sdk.name}: schema ${name} is not covered`);
    const values = doc.components.schemas[name]?.enum as string[] | undefined;
    if (values && name in sdk.enums && JSON.stringify(sdk.enums[name]) !== JSON.stringify(values)) {
      problems.push(
        `${sdk.name}: enum ${name} is ${JSON.stringify(sdk.enums[name])}, the contract says ${JSON.stringify(values)}`,
      );
    }
  }
  for (const name of [...sdk.schemas, ...Object.keys(sdk.enums)]) {
    if (!doc.components.schemas[name]) problems.push(`${sdk.name}: ${name} is no schema of the contract`);
  }
  const codes = new Set(sdk.problemCodes);
  for (const code of scope.problemCodes) {
    if (!codes.has(code)) problems.push(`${sdk.name}: problem code ${code} has no error class`);
  }
  if (sdk.webhookTypes) {
    const types = new Set(sdk.webhookTypes);
    for (const type of scope.webhookTypes) {
      if (!types.has(type)) problems.push(`${sdk.name}: webhook event ${type} is not known`);
    }
  }
  for (const op of scope.others) {
    const schemes = op.schemes.length === 0 ? ["none"] : op.schemes;
    for (const scheme of schemes) {
      if (!(scheme in OUT_OF_SCOPE)) {
        problems.push(
          `${op.id} (${op.http}) is secured by ${scheme}, which neither the SDKs cover nor the check lists as out of scope`,
        );
      }
    }
  }
  return problems;
}

/** The TypeScript SDK's tables: its operation table, a client's methods, the type aliases, the error classes. */
function typescriptTables(): SdkTables {
  const client = new LeadProvider({ apiKey: "lp_test_coverage" }) as unknown as Record<string, Record<string, unknown>>;
  const aliases = new Set<string>();
  for (const file of ["types.ts", "errors.ts"]) {
    const source = readFileSync(join(TS, file), "utf8");
    for (const m of source.matchAll(/^export type (\w+) = (?:S|Schemas|components\["schemas"\])\["(\w+)"\];/gm)) {
      if (m[1] === m[2]) aliases.add(m[1] as string);
    }
  }
  const index = readFileSync(join(TS, "index.ts"), "utf8");
  if (!index.includes('export type * from "./types.ts";')) aliases.clear();
  return {
    name: "TypeScript",
    operations: OPERATIONS,
    exists: (method) => {
      const [resource, name] = method.split(".") as [string, string];
      return typeof client[resource]?.[name] === "function";
    },
    schemas: aliases,
    enums: {},
    problemCodes: Object.keys(ERROR_CLASSES),
    webhookTypes: undefined,
  };
}

/** The PHP SDK's tables, read from its source (PHP's own ContractTest checks them by reflection). */
function phpTables(): SdkTables {
  const read = (file: string) => readFileSync(join(PHP, file), "utf8");
  const operations: Record<string, { http: string; method: string; iterate?: string }> = {};
  for (const m of read("Operations.php").matchAll(
    /'(\w+)' => \[\s*'http' => '([^']+)',\s*'method' => '([^']+)'(?:,\s*'iterate' => '([^']+)')?,?\s*\]/g,
  )) {
    operations[m[1] as string] = { http: m[2] as string, method: m[3] as string, ...(m[4] && { iterate: m[4] }) };
  }
  const client = read("Client.php");
  const exists = (method: string) => {
    const [resource, name] = method.split("->") as [string, string];
    const property = new RegExp(`public readonly (\\w+) \\$${resource};`).exec(client)?.[1];
    if (!property) return false;
    const file = join("Resources", `${property}.php`);
    const source = read(file) + (/extends Resource/.test(read(file)) ? read(join("Resources", "Resource.php")) : "");
    return new RegExp(`public function ${name}\\(`).test(source);
  };
  const schemas = read("Schemas.php");
  const section = (name: string) =>
    schemas.slice(schemas.indexOf(`const ${name} = [`), schemas.indexOf("];", schemas.indexOf(`const ${name} = [`)));
  const enums: Record<string, string[]> = {};
  for (const m of section("ENUMS").matchAll(/'(\w+)' => Enums\\(\w+)::class/g)) {
    const source = read(join("Enums", `${m[2]}.php`));
    enums[m[1] as string] = [...source.matchAll(/public const \w+ = '([^']*)';/g)].map((v) => v[1] as string);
  }
  const shapes = new Set([...section("SHAPES").matchAll(/^\s*'(\w+)' => '/gm)].map((m) => m[1] as string));
  const codes = [...read("Errors.php").matchAll(/'(\w+)' => \w+Exception::class/g)].map((m) => m[1] as string);
  const webhook = read("Webhook.php");
  const types = webhook.slice(
    webhook.indexOf("EVENT_TYPES = ["),
    webhook.indexOf("];", webhook.indexOf("EVENT_TYPES = [")),
  );
  return {
    name: "PHP",
    operations,
    exists,
    schemas: shapes,
    enums,
    problemCodes: codes,
    webhookTypes: [...types.matchAll(/'([\w.]+)'/g)].map((m) => m[1] as string),
  };
}

describe("the SDKs cover every provider operation and schema of openapi.yaml", () => {
  const scope = providerScope(spec);

  it("finds the provider operations and the schemas they reach", () => {
    expect(scope.provider.map((o) => o.id)).toContain("createLead");
    expect(scope.provider.length).toBeGreaterThanOrEqual(16);
    expect([...scope.schemas]).toEqual(expect.arrayContaining(["Lead", "LeadCreate", "Problem", "WebhookLeadEvent"]));
    expect(scope.schemas.has("ProviderDetail")).toBe(false); // an administrator's schema
  });

  it.each([
    { sdk: "TypeScript", tables: typescriptTables },
    { sdk: "PHP", tables: phpTables },
  ])("the $sdk SDK lacks nothing", ({ tables }) => {
    const sdk = tables();
    expect(Object.keys(sdk.operations).length).toBeGreaterThanOrEqual(16);
    expect(sdk.schemas.size).toBeGreaterThan(40);
    expect(gaps(spec, sdk)).toEqual([]);
  });

  it("PHP's enum files are the ones Schemas lists", () => {
    const listed = Object.keys(phpTables().enums).sort();
    const files = readdirSync(join(PHP, "Enums"))
      .map((f) => f.replace(/\.php$/, ""))
      .sort();
    expect(files).toEqual(listed);
  });

  const byScheme = new Map<string, string[]>();
  for (const op of scope.others) {
    for (const scheme of op.schemes.length === 0 ? ["none"] : op.schemes) {
      byScheme.set(scheme, [...(byScheme.get(scheme) ?? []), op.id]);
    }
  }
  // One test per operation left out, under its scheme and the reason, so that a run lists them all.
  for (const [scheme, reason] of Object.entries(OUT_OF_SCOPE)) {
    const ids = byScheme.get(scheme) ?? [];
    describe(`leaves out the ${ids.length} operations under ${scheme}: ${reason}`, () => {
      // The form's scheme may not be in the contract yet; the others are.
      if (ids.length === 0 && scheme === "PublishableKey") {
        it("(none in the contract yet)", () => expect(byScheme.has(scheme)).toBe(false));
      }
      for (const id of ids) {
        it(id, () => expect(scope.provider.map((o) => o.id)).not.toContain(id));
      }
    });
  }

  it("fails on a provider operation, a schema, an enum value, a problem code or a scheme the SDKs do not know", () => {
    const planted = structuredClone(spec) as Json;
    planted.components.schemas.Refund = { type: "object", properties: { lead: { $ref: "#/components/schemas/Lead" } } };
    planted.paths["/api/v1/public/refunds/"] = {
      get: {
        operationId: "listRefunds",
        security: [{ ProviderApiKey: [] }],
        responses: { "200": { content: { "application/json": { schema: { $ref: "#/components/schemas/Refund" } } } } },
      },
    };
    planted.paths["/api/v1/partner/leads/"] = {
      get: { operationId: "listPartnerLeads", security: [{ PartnerKey: [] }], responses: {} },
    };
    planted.components.schemas.ShipVia.enum.push("BY_AIR");
    planted.components.schemas.Problem.properties.code.enum.push("refund_refused");
    for (const tables of [typescriptTables, phpTables]) {
      const found = gaps(planted, tables()).join("\n");
      expect(found).toContain("listRefunds (GET /api/v1/public/refunds/) has no method");
      expect(found).toContain("schema Refund is not covered");
      expect(found).toContain("problem code refund_refused has no error class");
      expect(found).toContain("listPartnerLeads (GET /api/v1/partner/leads/) is secured by PartnerKey");
    }
    expect(gaps(planted, phpTables()).join("\n")).toContain('enum ShipVia is ["OPEN"');
  });
});
