/**
 * Hygiene of the published contracts: every example in openapi.yaml validates against its schema
 * (ajv, JSON Schema 2020-12, the dialect of OpenAPI 3.1), every operation is documented well
 * enough to build a client and a mock from it, and proto/ has no breaking change against the
 * previous commit. (`redocly lint` and `buf lint` run in `make lint`.)
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import type { Json } from "../helpers/app.ts";
import { ROOT, SPEC_FILE } from "../helpers/prism.ts";

const spec = YAML.parse(readFileSync(SPEC_FILE, "utf8")) as Json;
const SPEC_ID = "https://lead-provider.invalid/openapi.yaml";
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

// ajv-formats is CommonJS with a default export; under Node's ESM interop it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule.default;

/** Resolves `#/components/...` refs against the parsed document itself. */
function specValidator() {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  addFormats(ajv);
  // OpenAPI's own members (document root and schema annotations) are not JSON Schema keywords.
  ajv.addVocabulary([
    "openapi",
    "info",
    "jsonSchemaDialect",
    "servers",
    "paths",
    "webhooks",
    "components",
    "security",
    "tags",
    "externalDocs",
    "discriminator",
    "xml",
    "example",
  ]);
  ajv.addSchema(spec, SPEC_ID);
  return (pointer: string): ValidateFunction => {
    const validate = ajv.getSchema(`${SPEC_ID}#${pointer}`);
    if (!validate) throw new Error(`no schema at ${pointer}`);
    return validate;
  };
}

const pointerPart = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");
const at = (pointer: string): Json =>
  pointer
    .split("/")
    .slice(1)
    .reduce((node: Json, part) => node[part.replaceAll("~1", "/").replaceAll("~0", "~")], spec);

interface Example {
  /** Where the example is, as a JSON pointer into openapi.yaml. */
  readonly where: string;
  /** The schema it must satisfy, as a JSON pointer. */
  readonly schema: string;
  readonly value: unknown;
}

const SUBSCHEMA_LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "$defs", "dependentSchemas"];
const SUBSCHEMAS = ["items", "not", "if", "then", "else", "additionalProperties", "contains", "propertyNames"];

/** Schema-level `examples` of a schema and of every subschema in it. */
function schemaExamples(pointer: string, out: Example[]): void {
  const schema = at(pointer);
  if (schema === null || typeof schema !== "object") return;
  for (const [i, value] of ((schema.examples as unknown[]) ?? []).entries()) {
    out.push({ where: `${pointer}/examples/${i}`, schema: pointer, value });
  }
  for (const key of SUBSCHEMA_LISTS) {
    for (const i of ((schema[key] as unknown[]) ?? []).keys()) schemaExamples(`${pointer}/${key}/${i}`, out);
  }
  for (const key of SUBSCHEMA_MAPS) {
    for (const name of Object.keys(schema[key] ?? {})) schemaExamples(`${pointer}/${key}/${pointerPart(name)}`, out);
  }
  for (const key of SUBSCHEMAS) if (typeof schema[key] === "object") schemaExamples(`${pointer}/${key}`, out);
}

/** `example` / `examples` of a media type, parameter or header, checked against its `schema`. */
function objectExamples(pointer: string, out: Example[]): void {
  const node = at(pointer);
  if (!node || typeof node !== "object" || "$ref" in node || !node.schema) return;
  if ("example" in node) out.push({ where: `${pointer}/example`, schema: `${pointer}/schema`, value: node.example });
  for (const [name, example] of Object.entries((node.examples as Record<string, Json>) ?? {})) {
    if (example && "value" in example) {
      out.push({
        where: `${pointer}/examples/${pointerPart(name)}`,
        schema: `${pointer}/schema`,
        value: example.value,
      });
    }
  }
  schemaExamples(`${pointer}/schema`, out);
}

function contentExamples(pointer: string, out: Example[]): void {
  for (const mediaType of Object.keys(at(pointer)?.content ?? {})) {
    objectExamples(`${pointer}/content/${pointerPart(mediaType)}`, out);
  }
}

/** Every example in the document, with the schema it must satisfy. */
function allExamples(): Example[] {
  const out: Example[] = [];
  const c = spec.components ?? {};
  for (const name of Object.keys(c.schemas ?? {})) schemaExamples(`/components/schemas/${pointerPart(name)}`, out);
  for (const name of Object.keys(c.parameters ?? {}))
    objectExamples(`/components/parameters/${pointerPart(name)}`, out);
  for (const name of Object.keys(c.headers ?? {})) objectExamples(`/components/headers/${pointerPart(name)}`, out);
  for (const name of Object.keys(c.responses ?? {})) contentExamples(`/components/responses/${pointerPart(name)}`, out);
  for (const name of Object.keys(c.requestBodies ?? {}))
    contentExamples(`/components/requestBodies/${pointerPart(name)}`, out);
  for (const [path, item] of Object.entries(spec.paths as Record<string, Json>)) {
    const p = `/paths/${pointerPart(path)}`;
    for (const i of ((item.parameters as unknown[]) ?? []).keys()) objectExamples(`${p}/parameters/${i}`, out);
    for (const method of METHODS.filter((m) => item[m])) {
      const o = `${p}/${method}`;
      for (const i of ((item[method].parameters as unknown[]) ?? []).keys()) {
        objectExamples(`${o}/parameters/${i}`, out);
      }
      contentExamples(`${o}/requestBody`, out);
      for (const status of Object.keys(item[method].responses ?? {})) {
        const r = `${o}/responses/${pointerPart(status)}`;
        contentExamples(r, out);
        for (const header of Object.keys(at(r).headers ?? {}))
          objectExamples(`${r}/headers/${pointerPart(header)}`, out);
      }
    }
  }
  return out;
}

/** Follows a local `$ref` (response, parameter, request body) to the object it names. */
function deref(node: Json | undefined): Json | undefined {
  return node && typeof node.$ref === "string" ? deref(at(node.$ref.slice(1))) : node;
}

interface Operation {
  readonly id: string;
  readonly method: string;
  readonly path: string;
  readonly op: Json;
  readonly parameters: Json[];
}

const OPERATIONS: Operation[] = Object.entries(spec.paths as Record<string, Json>).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((method) => ({
    id: (item[method].operationId as string | undefined) ?? `${method.toUpperCase()} ${path}`,
    method,
    path,
    op: item[method] as Json,
    parameters: [...(item.parameters ?? []), ...(item[method].parameters ?? [])].map((p: Json) => deref(p) as Json),
  })),
);

/** The error statuses an operation must document, by what it takes and how it is secured. */
function expectedErrorStatuses({ path, op, parameters }: Operation): string[] {
  const schemes = ((op.security ?? spec.security ?? []) as Json[]).flatMap((s) => Object.keys(s));
  const statuses = new Set<string>();
  if (op.requestBody || parameters.length > 0) statuses.add("400");
  if (schemes.length > 0) statuses.add("401");
  if (schemes.includes("AdminJwt") && path.startsWith("/api/v1/lead_providers/")) statuses.add("403");
  if (parameters.some((p) => p.in === "path")) statuses.add("404");
  if (op.requestBody) for (const s of ["413", "415"]) statuses.add(s);
  // Every secured route: the provider's limits on the Public API, and on every route the
  // per-address limit on failed authentications.
  if (schemes.length > 0) statuses.add("429");
  return [...statuses].sort();
}

function hasExamples(media: Json | undefined): boolean {
  return Boolean(media && ("example" in media || Object.keys(media.examples ?? {}).length > 0));
}

describe("openapi.yaml", () => {
  it("has examples that all validate against their schemas", () => {
    const schemaAt = specValidator();
    const examples = allExamples();
    const failures = examples.flatMap(({ where, schema, value }) => {
      const validate = schemaAt(schema);
      return validate(value) ? [] : [`${where}: ${JSON.stringify(validate.errors?.slice(0, 3))}`];
    });
    expect(failures).toEqual([]);
    // Media-type examples of every operation, parameter and header examples and schema examples.
    expect(examples.length).toBeGreaterThan(150);
  });

  it("checks examples with a validator that does reject a wrong one", () => {
    // Guards the test above against passing vacuously (e.g. refs resolving to an empty schema).
    const schemaAt = specValidator();
    const created = at(
      "/paths/~1api~1v1~1public~1leads~1/post/responses/201/content/application~1json/examples/created/value",
    );
    const lead = schemaAt("/components/schemas/LeadCreated");
    expect(lead(created)).toBe(true);
    expect(lead({ ...created, state: "NEW" })).toBe(false);
    expect(lead({ ...created, origin: { ...created.origin, zip: "9021" } })).toBe(false);
    const body = schemaAt("/components/schemas/LeadCreate");
    const request = at(
      "/paths/~1api~1v1~1public~1leads~1/post/requestBody/content/application~1json/examples/domestic_open/value",
    );
    expect(body(request)).toBe(true);
    expect(body({ ...request, overseas_type: "FOREIGN" })).toBe(false);
    expect(body({ ...request, estimated_ship_date: "2026-02-30" })).toBe(false);
  });

  it("names every operation once", () => {
    const ids = OPERATIONS.map((o) => o.op.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(117);
  });

  it.each(OPERATIONS)("documents $id: summary, description, examples and the error responses that apply", (o) => {
    const { op } = o;
    expect(op.summary, "summary").toMatch(/\S/);
    expect(String(op.description ?? "").length, "description").toBeGreaterThan(40);
    expect(op.tags?.length, "tags").toBeGreaterThan(0);

    const documented = Object.keys(op.responses ?? {});
    const missing = expectedErrorStatuses(o).filter((s) => !documented.includes(s));
    expect(missing, "error responses that apply but are not documented").toEqual([]);
    expect(
      documented.some((s) => /^2\d\d$/.test(s)),
      "a success response",
    ).toBe(true);

    const withoutExamples: string[] = [];
    const body = deref(op.requestBody);
    for (const [type, media] of Object.entries((body?.content ?? {}) as Record<string, Json>)) {
      if (!hasExamples(media)) withoutExamples.push(`requestBody ${type}`);
    }
    for (const [status, ref] of Object.entries(op.responses as Record<string, Json>)) {
      const response = deref(ref) as Json;
      expect(response.description, `response ${status} description`).toMatch(/\S/);
      for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, Json>)) {
        if (!hasExamples(media)) withoutExamples.push(`${status} ${type}`);
      }
    }
    for (const p of o.parameters) {
      if (!("example" in p) && !p.examples && !p.schema?.examples) withoutExamples.push(`parameter ${p.name}`);
    }
    expect(withoutExamples, "request bodies, responses and parameters without examples").toEqual([]);
  });
});

describe("proto/", () => {
  const git = (...args: string[]) => spawnSync("git", args, { cwd: ROOT, encoding: "utf8" });

  // The previous commit; in a clone without one (a single commit, or shallow) the last commit
  // itself, so what is not committed yet must not break what is. BUF_BREAKING_AGAINST names another input.
  const hasPrevious = git("rev-parse", "--verify", "--quiet", "HEAD~1^{commit}").status === 0;
  const against = process.env.BUF_BREAKING_AGAINST ?? (hasPrevious ? ".git#ref=HEAD~1" : ".git#ref=HEAD");
  it("has no breaking change against the previous commit, or the last one in a clone without it (buf breaking)", () => {
    const buf = spawnSync(join(ROOT, "node_modules", ".bin", "buf"), ["breaking", "--against", against], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(buf.error).toBeUndefined();
    expect(buf.status, `buf breaking --against '${against}':\n${buf.stdout}${buf.stderr}`).toBe(0);
  });
});
