/**
 * GetLeadResponse and CreateLeadResponse in protobuf's binary form, written straight from the
 * domain lead with protobuf-es's own BinaryWriter: the bytes `toBinary(…Schema, create(…Schema,
 * { lead: leadMessage(lead) }))` gives, without building the message object first or walking its
 * descriptor field by field (issue 25: on gRPC's fast path that reflection, and the BigInt and
 * Timestamp objects it needs, were what kept GetLead behind REST's get).
 *
 * The field numbers are lead.proto's, in number order as toBinary writes them; proto3 fields
 * without presence are left out at their zero value, `optional` ones and messages are written
 * whenever set. test/lead-wire.test.ts compares the bytes with toBinary's for leads with and
 * without every optional part, so a field added to the proto and not here fails there.
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import {
  LeadState as LeadStateEnum,
  OverseasType as OverseasTypeEnum,
  ShipVia as ShipViaEnum,
  VehicleType as VehicleTypeEnum,
} from "../../generated/proto/leadprovider/v1/lead_pb.ts";
import { type Duplicate, isBillable, type Lead, type Warning } from "../leads/lead.ts";
import { enumValue } from "./convert.ts";

const LEN = WireType.LengthDelimited;
const VARINT = WireType.Varint;

/** A proto3 string without presence: left out when empty. */
function text(w: BinaryWriter, field: number, value: string): void {
  if (value !== "") w.tag(field, LEN).string(value);
}

/** An `optional string`: written when set, even empty. */
function optionalText(w: BinaryWriter, field: number, value: string | null | undefined): void {
  if (value !== null && value !== undefined) w.tag(field, LEN).string(value);
}

/** An int32 or enum without presence. */
function int(w: BinaryWriter, field: number, value: number): void {
  if (value !== 0) w.tag(field, VARINT).int32(value);
}

/** An int64 without presence (every value the service holds is a safe integer). */
function int64(w: BinaryWriter, field: number, value: number): void {
  if (value !== 0) w.tag(field, VARINT).int64(value);
}

/** A google.protobuf.Timestamp, as timestampFromDate makes it (seconds = 1, nanos = 2). */
function timestamp(w: BinaryWriter, field: number, date: Date): void {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  w.tag(field, LEN).fork();
  int64(w, 1, seconds);
  int(w, 2, (ms - seconds * 1000) * 1_000_000);
  w.join();
}

function place(w: BinaryWriter, field: number, p: Lead["origin"]): void {
  w.tag(field, LEN).fork();
  text(w, 1, p.zip);
  text(w, 2, p.city);
  text(w, 3, p.stateCode);
  int(w, 4, p.stateId);
  w.join();
}

function duplicate(w: BinaryWriter, d: Duplicate): void {
  w.tag(27, LEN).fork();
  for (const m of d.matchedOn) w.tag(1, LEN).string(m);
  timestamp(w, 2, d.firstSeenAt);
  if (d.sameProvider) w.tag(3, VARINT).bool(true);
  if (d.original) {
    w.tag(4, LEN).fork();
    int64(w, 1, d.original.id);
    text(w, 2, d.original.orderNumber);
    text(w, 3, d.original.externalId);
    w.join();
  }
  w.join();
}

/** The Lead message as field `field` of the response. */
function lead(w: BinaryWriter, field: number, l: Lead): void {
  w.tag(field, LEN).fork();
  int64(w, 1, l.id);
  text(w, 2, l.orderNumber);
  int(w, 3, enumValue(LeadStateEnum, l.state));
  text(w, 4, l.leadStatus);
  text(w, 5, l.externalId);
  timestamp(w, 6, l.createdAt);
  timestamp(w, 7, l.updatedAt);
  timestamp(w, 8, l.stateChangedAt);
  text(w, 9, l.firstName);
  text(w, 10, l.lastName);
  text(w, 11, l.email);
  text(w, 12, l.phoneNumber);
  optionalText(w, 13, l.companyName);
  optionalText(w, 14, l.noteFromShipper);
  text(w, 15, l.estimatedShipDate);
  int(w, 16, enumValue(OverseasTypeEnum, l.overseasType));
  int(w, 17, enumValue(ShipViaEnum, l.shipVia));
  place(w, 18, l.origin);
  if (l.destination) place(w, 19, l.destination);
  for (const v of l.vehicles) {
    w.tag(20, LEN).fork();
    int(w, 1, v.year);
    text(w, 2, v.make);
    text(w, 3, v.model);
    int(w, 4, enumValue(VehicleTypeEnum, v.type));
    int64(w, 5, v.tariff);
    int64(w, 6, v.deposit);
    if (v.vehicleRun !== null && v.vehicleRun !== undefined) w.tag(7, VARINT).bool(v.vehicleRun);
    optionalText(w, 8, v.vin);
    w.join();
  }
  for (const h of l.history) {
    w.tag(21, LEN).fork();
    if (h.fromState !== null) int(w, 1, enumValue(LeadStateEnum, h.fromState));
    int(w, 2, enumValue(LeadStateEnum, h.toState));
    text(w, 3, h.leadStatus);
    timestamp(w, 4, h.changedAt);
    text(w, 5, h.actor);
    w.join();
  }
  if (l.livemode) w.tag(22, VARINT).bool(true);
  text(w, 23, l.phoneE164 ?? "");
  optionalText(w, 24, l.subId);
  optionalText(w, 25, l.sourceUrl);
  if (l.consent) {
    const c = l.consent;
    w.tag(26, LEN).fork();
    optionalText(w, 1, c.trustedFormCertUrl);
    optionalText(w, 2, c.jornayaLeadId);
    optionalText(w, 3, c.consentText);
    optionalText(w, 4, c.consentedAt);
    optionalText(w, 5, c.ipAddress);
    optionalText(w, 6, c.userAgent);
    optionalText(w, 7, c.pageUrl);
    w.join();
  }
  if (l.duplicate) duplicate(w, l.duplicate);
  if (isBillable(l)) w.tag(28, VARINT).bool(true);
  w.join();
}

/** GetLeadResponse { lead } as bytes. */
/**
 * One writer for every response: its buffer, grown once to a lead's size, is reused (finish()
 * copies the bytes out and resets it), which halves the time a fresh writer takes. Encoding is
 * synchronous, so calls never interleave; a throw mid-message resets it too.
 */
const shared = new BinaryWriter();
const ENVELOPE = new Uint8Array(5);

/**
 * The message `write` writes, optionally behind gRPC's 5-byte envelope (flags 0, then the length
 * big-endian), so the fast path sends the bytes without copying them into a frame.
 */
function bytes(write: (w: BinaryWriter) => void, envelope: boolean): Uint8Array {
  const w = shared;
  try {
    if (envelope) w.raw(ENVELOPE);
    write(w);
  } catch (e) {
    w.finish();
    throw e;
  }
  const out = w.finish();
  if (envelope) new DataView(out.buffer, out.byteOffset, 5).setUint32(1, out.length - 5);
  return out;
}

/** GetLeadResponse { lead } as bytes (with `envelope`, as one gRPC message frame). */
export function getLeadResponseBytes(l: Lead, envelope = false): Uint8Array {
  return bytes((w) => lead(w, 1, l), envelope);
}

/** CreateLeadResponse { lead, warnings } as bytes (with `envelope`, as one gRPC message frame). */
export function createLeadResponseBytes(l: Lead, warnings: readonly Warning[], envelope = false): Uint8Array {
  return bytes((w) => {
    lead(w, 1, l);
    for (const warning of warnings) {
      w.tag(2, LEN).fork();
      text(w, 1, warning.field);
      text(w, 2, warning.code);
      text(w, 3, warning.message);
      w.join();
    }
  }, envelope);
}
