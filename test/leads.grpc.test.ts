import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorDetailSchema } from "../generated/proto/leadprovider/v1/errors_pb.ts";
import { LeadState, OverseasType, ShipVia, VehicleType } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, leadBody, shipDate, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient, grpcCall, grpcJsClient, PROTOCOLS } from "./helpers/grpc.ts";

/** The Any details of a google.rpc.Status (grpc-status-details-bin), read off the wire. */
function statusDetails(bin: Uint8Array): { typeUrl: string; value: Uint8Array }[] {
  const out: { typeUrl: string; value: Uint8Array }[] = [];
  const status = new BinaryReader(bin);
  while (status.pos < status.len) {
    const [field, wireType] = status.tag();
    if (field !== 3) {
      status.skip(wireType);
      continue;
    }
    const any = new BinaryReader(status.bytes());
    let typeUrl = "";
    let value: Uint8Array = new Uint8Array();
    while (any.pos < any.len) {
      const [f, wt] = any.tag();
      if (f === 1) typeUrl = any.string();
      else if (f === 2) value = any.bytes();
      else any.skip(wt);
    }
    out.push({ typeUrl, value });
  }
  return out;
}

function request(overrides: Json = {}) {
  return {
    externalId: `grpc-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    firstName: "Ana",
    lastName: "Rivera",
    email: "ana@example.com",
    phoneNumber: "787-555-0100",
    originZip: "33101",
    destinationZip: "00901",
    estimatedShipDate: shipDate(25),
    overseasType: OverseasType.FOREIGN,
    shipVia: ShipVia.ROLLON_ROLLOFF,
    vehicles: [
      {
        year: 2019,
        make: "Honda",
        model: "Civic",
        type: VehicleType.CAR,
        tariff: 1800n,
        deposit: 200n,
        vehicleRun: true,
      },
    ],
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<ConnectError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

function detailOf(err: ConnectError) {
  const [detail] = err.findDetails(ErrorDetailSchema);
  return detail;
}

describe.each(BACKENDS)("Public Lead API over Connect and gRPC ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "1000000" });
    ({ key } = await t.provider());
  });
  afterAll(() => t.stop());

  it.each(PROTOCOLS)("creates over %s; the lead reads the same over REST", async (protocol) => {
    const client = connectClient(PublicLeadService, t.port, protocol);
    const req = request();
    const { lead } = await client.createLead(req, bearer(key));
    expect(lead?.state).toBe(LeadState.LEAD);
    expect(lead?.source).toBe("grpc");
    expect(lead?.orderNumber).toMatch(/^LP-[0-9A-HJKMNP-TV-Z]{10}$/);
    expect(lead?.origin).toMatchObject({ zip: "33101", city: "Miami", state: "FL" });
    expect(lead?.destination).toMatchObject({ zip: "00901", city: "San Juan", state: "PR" });
    const rest = (await (await t.call("GET", `/api/v1/public/leads/${req.externalId}/`, { auth: key })).json()) as Json;
    expect(rest).toMatchObject({
      id: Number(lead?.id),
      order_number: lead?.orderNumber,
      overseas_type: "FOREIGN",
      ship_via: "ROLLON_ROLLOFF",
      source: "grpc",
      vehicles: [
        { year: 2019, make: "Honda", model: "Civic", type: "CAR", tariff: 1800, deposit: 200, vehicle_run: true },
      ],
    });
  });

  it("reads over gRPC a lead created over REST", async () => {
    const body = leadBody();
    const created = (await (await t.call("POST", "/api/v1/public/leads/", { body, auth: key })).json()) as Json;
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const { lead } = await client.getLead({ externalId: body.external_id as string }, bearer(key));
    expect(Number(lead?.id)).toBe(created.id);
    expect(lead?.source).toBe("api");
    expect(lead?.shipVia).toBe(ShipVia.OPEN);
    expect(lead?.history.map((h) => h.toState)).toEqual([LeadState.LEAD]);
  });

  it("rejects a cross-set pair with INVALID_ARGUMENT and the same sentence as REST", async () => {
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const err = await rejection(client.createLead(request({ shipVia: ShipVia.DRIVE_AWAY }), bearer(key)));
    expect(err.code).toBe(Code.InvalidArgument);
    const rest = (await (
      await t.call("POST", "/api/v1/public/leads/", {
        body: leadBody({ overseas_type: "FOREIGN", ship_via: "DRIVE_AWAY" }),
        auth: key,
      })
    ).json()) as Json;
    expect(detailOf(err)?.violations.map((v) => ({ field: v.field, code: v.code, message: v.message }))).toEqual(
      rest.errors,
    );
  });

  it("reports every missing field of an empty request", async () => {
    const client = connectClient(PublicLeadService, t.port, "connect");
    const err = await rejection(client.createLead({}, bearer(key)));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(detailOf(err)?.violations.map((v) => v.field)).toEqual([
      "external_id",
      "first_name",
      "last_name",
      "email",
      "phone_number",
      "estimated_ship_date",
      "origin_zip",
      "overseas_type",
      "ship_via",
      "vehicles",
    ]);
  });

  it("rejects an unknown ZIP with invalid_zip and a repeat with the existing lead named", async () => {
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const zipErr = await rejection(client.createLead(request({ originZip: "99999" }), bearer(key)));
    expect(detailOf(zipErr)?.code).toBe("invalid_zip");
    const req = request();
    const { lead } = await client.createLead(req, bearer(key));
    const dup = await rejection(client.createLead(req, bearer(key)));
    expect(dup.code).toBe(Code.InvalidArgument);
    expect(detailOf(dup)).toMatchObject({
      code: "duplicate_external_id",
      existingLead: { id: lead?.id, orderNumber: lead?.orderNumber },
    });
  });

  it("answers NOT_FOUND for an unknown or another provider's lead, UNAUTHENTICATED without a key", async () => {
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const req = request();
    await client.createLead(req, bearer(key));
    const other = await t.provider();
    expect((await rejection(client.getLead({ externalId: req.externalId }, bearer(other.key)))).code).toBe(
      Code.NotFound,
    );
    expect((await rejection(client.getLead({ externalId: "nope" }, bearer(key)))).code).toBe(Code.NotFound);
    expect((await rejection(client.getLead({ externalId: req.externalId }))).code).toBe(Code.Unauthenticated);
    const jwt = await t.token();
    expect((await rejection(client.getLead({ externalId: req.externalId }, bearer(jwt)))).code).toBe(
      Code.Unauthenticated,
    );
  });

  it("serves grpc-js clients built from the .proto files, with error details in the trailers", async () => {
    const client = grpcJsClient(t.port, "PublicLeadService");
    try {
      const ok = await grpcCall<Json>(
        client,
        "CreateLead",
        {
          external_id: `grpcjs-${Date.now()}`,
          first_name: "Li",
          last_name: "Wei",
          email: "li@example.com",
          phone_number: "2125550100",
          origin_zip: "10001",
          estimated_ship_date: shipDate(40),
          overseas_type: "OVERSEAS_TYPE_DOMESTIC",
          ship_via: "SHIP_VIA_ENCLOSED",
          vehicles: [
            { year: 2024, make: "Tesla", model: "Model 3", type: "VEHICLE_TYPE_CAR", tariff: 1200, deposit: 0 },
          ],
        },
        key,
      );
      expect(ok.error).toBeUndefined();
      expect(ok.response?.lead).toMatchObject({ state: "LEAD_STATE_LEAD", lead_status: "LEAD" });
      const bad = await grpcCall(client, "CreateLead", { external_id: "x" }, key);
      expect(bad.error?.code).toBe(3); // INVALID_ARGUMENT
      const raw = bad.error?.metadata.get("grpc-status-details-bin")[0] as Buffer;
      const [any] = statusDetails(raw);
      expect(any?.typeUrl).toBe("type.googleapis.com/leadprovider.v1.ErrorDetail");
      const detail = fromBinary(ErrorDetailSchema, any?.value ?? new Uint8Array());
      expect(detail.code).toBe("validation_error");
      expect(detail.violations).toContainEqual(expect.objectContaining({ field: "first_name", code: "required" }));
    } finally {
      client.close();
    }
  });
});
