/**
 * gRPC errors in the standard rich error model, read by clients no one here wrote: grpc-js for
 * the call, protobufjs with google-proto-files' google/rpc protos to decode
 * grpc-status-details-bin as google.rpc.Status.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, minuteClock, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { grpcCall, grpcJsClient } from "./helpers/grpc.ts";

const GOOGLE_PROTOS = dirname(createRequire(import.meta.url).resolve("google-proto-files/package.json"));

function googleRpc(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => `${GOOGLE_PROTOS}/${target}`;
  return root.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"], { keepCase: true });
}

/** grpc-status-details-bin as google.rpc.Status, each Any detail decoded by its type URL. */
function decodeStatus(root: protobuf.Root, bin: Buffer): { code: number; message: string; details: Json[] } {
  const status = root.lookupType("google.rpc.Status").decode(bin) as unknown as {
    code: number;
    message: string;
    details: { type_url: string; value: Uint8Array }[];
  };
  const details = status.details.map((any) => {
    const typeName = any.type_url.replace("type.googleapis.com/", "");
    if (!typeName.startsWith("google.rpc.")) return { "@type": typeName };
    const message = root.lookupType(typeName).decode(any.value);
    return { "@type": typeName, ...root.lookupType(typeName).toObject(message, { longs: Number }) };
  });
  return { code: status.code, message: status.message, details };
}

describe.each(BACKENDS)("gRPC errors carry google.rpc details ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  const root = googleRpc();
  const clock = minuteClock();
  beforeAll(async () => {
    t = await startTestApp(backend, {}, { now: clock });
    ({ key } = await t.provider());
  });
  afterAll(async () => t?.stop());

  it("a rejected lead carries BadRequest field violations and ErrorInfo with the problem code", async () => {
    const client = grpcJsClient(t.port, "PublicLeadService");
    try {
      const bad = await grpcCall(client, "CreateLead", { external_id: "x", origin_zip: "00000" }, key);
      expect(bad.error?.code).toBe(3); // INVALID_ARGUMENT
      const status = decodeStatus(root, bad.error?.metadata.get("grpc-status-details-bin")[0] as Buffer);
      expect(status.code).toBe(3);
      const types = status.details.map((d) => d["@type"]);
      expect(types).toEqual(["leadprovider.v1.ErrorDetail", "google.rpc.ErrorInfo", "google.rpc.BadRequest"]);
      const info = status.details.find((d) => d["@type"] === "google.rpc.ErrorInfo");
      expect(info).toMatchObject({
        reason: "VALIDATION_ERROR",
        domain: "lead-provider-api",
        metadata: { code: "validation_error" },
      });
      const badRequest = status.details.find((d) => d["@type"] === "google.rpc.BadRequest");
      expect(badRequest?.field_violations).toContainEqual(
        expect.objectContaining({ field: "first_name", reason: "required", description: "first_name is required" }),
      );
      expect(badRequest?.field_violations).toContainEqual(expect.objectContaining({ field: "origin_zip" }));
    } finally {
      client.close();
    }
  });

  it("an unknown key carries ErrorInfo INVALID_API_KEY and no field violations", async () => {
    const client = grpcJsClient(t.port, "PublicLeadService");
    try {
      // Another last character (a key ending in "x" would otherwise be sent unchanged: 1 run in 62).
      const unknown = `${key.slice(0, -1)}${key.endsWith("x") ? "y" : "x"}`;
      const refused = await grpcCall(client, "GetLead", { external_id: "nope" }, unknown);
      expect(refused.error?.code).toBe(16); // UNAUTHENTICATED
      const status = decodeStatus(root, refused.error?.metadata.get("grpc-status-details-bin")[0] as Buffer);
      expect(status.details.map((d) => d["@type"])).toEqual(["leadprovider.v1.ErrorDetail", "google.rpc.ErrorInfo"]);
      expect(status.details[1]).toMatchObject({ reason: "INVALID_API_KEY", metadata: { code: "invalid_api_key" } });
    } finally {
      client.close();
    }
  });

  it("a rate-limited call carries RetryInfo with the seconds to wait", async () => {
    const { key: limited } = await t.provider(undefined, { rate_limit_per_minute: 1 });
    const client = grpcJsClient(t.port, "PublicLeadService");
    try {
      clock.nextMinute(); // both calls in one minute of the injected clock
      await grpcCall(client, "GetLead", { external_id: "first" }, limited);
      const before = clock.secondsLeft();
      const over = await grpcCall(client, "GetLead", { external_id: "second" }, limited);
      const after = clock.secondsLeft();
      expect(over.error?.code).toBe(8); // RESOURCE_EXHAUSTED
      const status = decodeStatus(root, over.error?.metadata.get("grpc-status-details-bin")[0] as Buffer);
      const retry = status.details.find((d) => d["@type"] === "google.rpc.RetryInfo");
      // The seconds to the end of the minute, as the injected clock read them while it answered.
      expect(Number(retry?.retry_delay.seconds)).toBeGreaterThanOrEqual(after);
      expect(Number(retry?.retry_delay.seconds)).toBeLessThanOrEqual(before);
      expect(status.details[1]).toMatchObject({ reason: "RATE_LIMITED", metadata: { window: "minute" } });
      expect(over.error?.metadata.get("ratelimit")[0]).toMatch(/^"minute";r=0;t=\d+$/);
    } finally {
      client.close();
    }
  });
});
