/**
 * The contract's schemas of the fast path's bodies (rest/fast-path.ts), compiled once with the
 * OpenAPI validator's own Ajv factory and options (express-openapi-validator's
 * framework/ajv: Ajv 2020 for OpenAPI 3.1, its formats, ajv-formats in full mode, the same
 * strictness), so a body the fast path accepts is one the validator accepts. A body it rejects
 * is handed to Express, whose validator words the rejection.
 */
import { createRequestAjv, createResponseAjv } from "express-openapi-validator/dist/framework/ajv/index.js";

type Check = (data: unknown) => boolean;

export interface SchemaValidators {
  /** LeadCreate: the body of POST /api/v1/public/leads/. */
  readonly leadCreate: Check;
  /** Lead: the answer of GET /api/v1/public/leads/{external_id}/. */
  readonly lead: Check;
  /** LeadCreated: the answer of POST /api/v1/public/leads/. */
  readonly leadCreated: Check;
}

/** express-openapi-validator's AjvOptions.baseOptions() for this service's validator settings. */
const BASE = {
  strict: false,
  strictNumbers: true,
  strictTuples: true,
  allowUnionTypes: false,
  validateSchema: false,
  useDefaults: true,
  removeAdditional: false,
  validateFormats: true,
  formats: {},
  serDesMap: {},
  ajvFormats: { mode: "full" },
} as const;

export function createSchemaValidators(document: object): SchemaValidators {
  // The validator preprocesses the document it is given in place; this one works on its own copy.
  const request = createRequestAjv(structuredClone(document) as never, { ...BASE, coerceTypes: false } as never);
  const response = createResponseAjv(
    structuredClone(document) as never,
    { ...BASE, useDefaults: false, coerceTypes: false } as never,
  );
  const compiled = (ajv: typeof request, name: string): Check => {
    const validate = ajv.getSchema(`#/components/schemas/${name}`);
    if (!validate) throw new Error(`openapi.yaml has no components.schemas.${name}`);
    return (data) => validate(data) === true;
  };
  return {
    leadCreate: compiled(request, "LeadCreate"),
    lead: compiled(response, "Lead"),
    leadCreated: compiled(response, "LeadCreated"),
  };
}
