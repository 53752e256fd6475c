/**
 * Input no honest client sends, refused as the client's mistake (400, INVALID_ARGUMENT) naming
 * the field or parameter, never as the service's (500, INTERNAL): lone UTF-16 surrogates in any
 * text field, numbers past int64 or JavaScript's safe range, ids written as hex, exponent,
 * fraction or with a sign or space, and NUL characters, over REST and gRPC.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadWorkflowService } from "../../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "../helpers/app.ts";
import { BACKENDS } from "../helpers/database.ts";
import { bearer, connectClient, grpcLead, rejection } from "../helpers/grpc.ts";

const P = "/api/v1/lead_providers/";
const LEADS = "/api/v1/public/leads/";
const MAX_INT64 = 2n ** 63n - 1n;

describe.each(BACKENDS)("hostile input ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  let providerId: number;
  let live: string;
  let test: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    admin = await t.token();
    const p = await t.provider();
    providerId = p.id;
    live = p.key;
    const issued = await t.call("POST", `${P}${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } });
    test = ((await issued.json()) as Json).api_key as string;
  });
  afterAll(() => t.stop());

  describe("lone UTF-16 surrogates", () => {
    const LONE = "x\ud800";
    const leadCases: [string, (b: Json) => void][] = [
      ["external_id", (b) => (b.external_id = `${b.external_id}\udc00`)],
      ["first_name", (b) => (b.first_name = LONE)],
      ["last_name", (b) => (b.last_name = LONE)],
      ["company_name", (b) => (b.company_name = LONE)],
      ["note_from_shipper", (b) => (b.note_from_shipper = LONE)],
      ["email", (b) => (b.email = "x\ud800@example.com")],
      ["phone_number", (b) => (b.phone_number = "+1 310 555 0100\ud800")],
      ["origin_city", (b) => (b.origin_city = LONE)],
      ["vehicles[0].make", (b) => (b.vehicles[0].make = LONE)],
      ["vehicles[0].model", (b) => (b.vehicles[0].model = "\udfff")],
    ];

    it("answers 400 validation_error naming the field, for live and test keys (REST)", async () => {
      for (const key of [live, test]) {
        for (const [field, spoil] of leadCases) {
          const body = leadBody() as Json;
          spoil(body);
          const res = await t.call("POST", LEADS, { auth: key, body: JSON.stringify(body) });
          expect(res.status, field).toBe(400);
          const problem = (await res.json()) as Json;
          expect(problem.code, field).toBe("validation_error");
          expect(
            (problem.errors as Json[]).map((e) => e.field),
            field,
          ).toContain(field);
        }
      }
    });

    it("answers INVALID_ARGUMENT over Connect JSON, never INTERNAL", async () => {
      const client = connectClient(PublicLeadService, t.port, "connect");
      const body = leadBody() as Json;
      const err = await rejection(
        client.createLead(grpcLead({ externalId: body.external_id, firstName: LONE }), bearer(live)),
      );
      expect(err.code).toBe(Code.InvalidArgument);
    });

    it("answers 400 on the Management API's text fields too", async () => {
      const fields: Record<string, unknown>[] = [
        { name: LONE },
        { name: "Surrogate Notes", notes: LONE },
        { name: "Surrogate Mail", contact_email: "a\ud800@example.com" },
        { name: "Surrogate Hook", webhook_url: "https://hooks.example.com/\ud800" },
      ];
      for (const body of fields) {
        const res = await t.call("POST", `${P}create/`, { auth: admin, body: JSON.stringify(body) });
        expect(res.status, JSON.stringify(Object.keys(body))).toBe(400);
        expect(((await res.json()) as Json).code).toBe("validation_error");
      }
      const p = await t.provider();
      const res = await t.call("PATCH", `${P}${p.id}/`, { auth: admin, body: JSON.stringify({ notes: LONE }) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).errors[0].field).toBe("notes");
    });
  });

  describe("numbers and NUL characters in parameters", () => {
    it("refuses hostile numbers and NUL in Management API paths and queries with 400 naming the parameter", async () => {
      const cases: [string, string][] = [
        [`${P}?page=99999999999999999999`, "page"],
        [`${P}?search=a%00b`, "search"],
        [`${P}9223372036854775808/`, "id"],
        [`${P}9007199254740993/`, "id"],
        [`${P}0x1/`, "id"],
        [`${P}1e0/`, "id"],
        [`${P}%201/`, "id"],
        [`${P}1.0/`, "id"],
        [`${P}-1/`, "id"],
      ];
      for (const [path, field] of cases) {
        const res = await t.call("GET", path, { auth: admin });
        expect(res.status, path).toBe(400);
        const body = (await res.json()) as Json;
        expect(
          body.errors.map((e: Json) => e.field),
          path,
        ).toContain(field);
      }
      expect((await t.call("GET", `${P}${providerId}/`, { auth: admin })).status).toBe(200);
    });

    it("refuses hostile numbers and NUL in gRPC fields with INVALID_ARGUMENT, never INTERNAL", async () => {
      const providers = connectClient(ProviderService, t.port, "grpc");
      const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
      const calls: [string, () => Promise<unknown>][] = [
        ["ListProviders search NUL", () => providers.listProviders({ search: "a\u0000b" }, bearer(admin))],
        ["ListProviders page", () => providers.listProviders({ page: 2 ** 31 - 1 }, bearer(admin))],
        ["GetProvider max int64", () => providers.getProvider({ id: MAX_INT64 }, bearer(admin))],
        ["GetProvider negative", () => providers.getProvider({ id: -1n }, bearer(admin))],
        ["FindLead max int64", () => workflow.findLead({ key: { case: "id", value: MAX_INT64 } }, bearer(admin))],
        [
          "FindLead order number NUL",
          () => workflow.findLead({ key: { case: "orderNumber", value: "LP\u0000" } }, bearer(admin)),
        ],
        ["TransitionLead max int64", () => workflow.transitionLead({ leadId: MAX_INT64, toState: 2 }, bearer(admin))],
      ];
      for (const [label, call] of calls) expect((await rejection(call())).code, label).toBe(Code.InvalidArgument);
    });
  });
});
