/**
 * GetLeadResponse and CreateLeadResponse in protobuf's binary form, written straight from the
 * domain lead into one buffer: the bytes `toBinary(…Schema, create(…Schema, { lead:
 * leadMessage(lead) }))` gives, without building the message object first or walking its
 * descriptor field by field (on gRPC's fast path that reflection, and the BigInt and
 * Timestamp objects it needs, were what kept GetLead behind REST's get). The wire format's few
 * rules (varints, tags, length-delimited fields) are written here rather than through
 * protobuf-es's BinaryWriter (below).
 *
 * The field numbers are lead.proto's, in number order as toBinary writes them; proto3 fields
 * without presence are left out at their zero value, `optional` ones and messages are written
 * whenever set. test/lead-wire.test.ts compares the bytes with toBinary's for leads with and
 * without every optional part, so a field added to the proto and not here fails there.
 */
import {
  LeadState as LeadStateEnum,
  OverseasType as OverseasTypeEnum,
  ShipVia as ShipViaEnum,
  VehicleType as VehicleTypeEnum,
} from "../../../generated/proto/leadprovider/v1/lead_pb.ts";
import { enumValue } from "../../rpc/convert.ts";
import { type Duplicate, isBillable, type Lead, type Warning } from "../lead.ts";

const LEN = 2;
const VARINT = 0;

/**
 * The bytes are written into one buffer, reused from call to call (grown when a message needs
 * more), and copied out once at the end. protobuf-es's BinaryWriter (2.17) writes into one
 * growing buffer too, with a fast path for short ASCII text; what it cost here was its int64
 * (`protoInt64.enc`: a BigInt and a `{ lo, hi }` object for each of a lead's ten or so int64s: the
 * id, each timestamp's seconds, each vehicle's tariff and deposit), a subarray and a result object
 * for each text longer than 32 characters or not ASCII (TextEncoder's `encodeInto`), and a range
 * check per value: about twice this file's time (measured locally; the drivers and their output are in git at commit 2b0198a, bench/results/).
 * A nested message's length goes before it: one byte is kept for it, and the rare message of 128
 * bytes or more is moved up to make room for a longer length, as BinaryWriter does. Encoding is
 * synchronous, so calls never interleave; each starts at the beginning again.
 */
let buf = Buffer.allocUnsafe(4096);
let pos = 0;

function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  const grown = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(grown, 0, 0, pos);
  buf = grown;
}

/** An unsigned varint below 2^32. */
function varint32(v: number): void {
  ensure(5);
  while (v > 127) {
    buf[pos++] = (v & 127) | 128;
    v >>>= 7;
  }
  buf[pos++] = v;
}

/** A varint of 64 bits given as two unsigned 32-bit halves. */
function varint64(lo: number, hi: number): void {
  ensure(10);
  while (hi > 0 || lo > 127) {
    buf[pos++] = (lo & 127) | 128;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  buf[pos++] = lo;
}

const tag = (field: number, wireType: number) => varint32((field << 3) | wireType);

/** An int32 as protobuf writes it: a negative one sign-extended to ten bytes. Refuses what toBinary refuses. */
function int32Value(v: number): void {
  if (!Number.isInteger(v) || v > 0x7fffffff || v < -0x80000000) throw new Error(`invalid int32: ${v}`);
  if (v >= 0) varint32(v);
  else varint64(v >>> 0, 0xffffffff);
}

/**
 * An int64 held as a number (two's complement when negative, as protobuf writes it). Refuses what
 * toBinary refuses: a fraction, NaN (an invalid Date's seconds) or a value outside 64 bits.
 */
function int64Value(v: number): void {
  if (!Number.isInteger(v) || v >= 2 ** 63 || v < -(2 ** 63)) throw new Error(`invalid int64: ${v}`);
  varint64(v >>> 0, Math.floor(v / 4294967296) >>> 0);
}

/** UTF-8 behind its length (a lone surrogate as U+FFFD, as TextEncoder writes it). */
function stringValue(s: string): void {
  const length = s.length;
  if (length < 128) {
    // ASCII, the usual text, byte by byte (a call into Buffer#write costs more for short text).
    ensure(1 + length);
    let i = 0;
    for (; i < length; i++) {
      const c = s.charCodeAt(i);
      if (c > 127) break;
      buf[pos + 1 + i] = c;
    }
    if (i === length) {
      buf[pos] = length;
      pos += 1 + length;
      return;
    }
  }
  if (length * 3 < 128) {
    // At most 127 bytes: the length fits the one byte kept before the text.
    ensure(1 + length * 3);
    const n = buf.write(s, pos + 1, "utf8");
    buf[pos] = n;
    pos += 1 + n;
    return;
  }
  const n = Buffer.byteLength(s, "utf8");
  varint32(n);
  ensure(n);
  pos += buf.write(s, pos, "utf8");
}

/** Starts a nested message (field `field`): where its length goes. */
function fork(field: number): number {
  tag(field, LEN);
  ensure(1);
  return pos++;
}

/** Ends the nested message `fork` started: its length in the byte kept, or more bytes moved up for it. */
function join(at: number): void {
  const length = pos - at - 1;
  if (length < 128) {
    buf[at] = length;
    return;
  }
  let size = 1;
  for (let v = length; v > 127; v >>>= 7) size++;
  ensure(size - 1);
  buf.copyWithin(at + size, at + 1, pos);
  pos += size - 1;
  let v = length;
  let i = at;
  while (v > 127) {
    buf[i++] = (v & 127) | 128;
    v >>>= 7;
  }
  buf[i] = v;
}

/** A proto3 string without presence: left out when empty. */
function text(field: number, value: string): void {
  if (value === "") return;
  tag(field, LEN);
  stringValue(value);
}

/** An `optional string`: written when set, even empty. */
function optionalText(field: number, value: string | null | undefined): void {
  if (value === null || value === undefined) return;
  tag(field, LEN);
  stringValue(value);
}

/** An int32 or enum without presence. */
function int(field: number, value: number): void {
  if (value === 0) return;
  tag(field, VARINT);
  int32Value(value);
}

/** An int64 without presence (every value the service holds is a safe integer). */
function int64(field: number, value: number): void {
  if (value === 0) return;
  tag(field, VARINT);
  int64Value(value);
}

/** A bool written when true (proto3, no presence) or, for an `optional bool`, whenever set. */
function bool(field: number, value: boolean): void {
  tag(field, VARINT);
  ensure(1);
  buf[pos++] = value ? 1 : 0;
}

/** A google.protobuf.Timestamp, as timestampFromDate makes it (seconds = 1, nanos = 2). */
function timestamp(field: number, date: Date): void {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  const at = fork(field);
  int64(1, seconds);
  int(2, (ms - seconds * 1000) * 1_000_000);
  join(at);
}

function place(field: number, p: Lead["origin"]): void {
  const at = fork(field);
  text(1, p.zip);
  text(2, p.city);
  text(3, p.stateCode);
  int(4, p.stateId);
  join(at);
}

function duplicate(d: Duplicate): void {
  const at = fork(27);
  for (const m of d.matchedOn) {
    tag(1, LEN);
    stringValue(m);
  }
  timestamp(2, d.firstSeenAt);
  if (d.sameProvider) bool(3, true);
  if (d.original) {
    const original = fork(4);
    int64(1, d.original.id);
    text(2, d.original.orderNumber);
    text(3, d.original.externalId);
    join(original);
  }
  join(at);
}

/** The Lead message as field `field` of the response. */
function lead(field: number, l: Lead): void {
  const at = fork(field);
  int64(1, l.id);
  text(2, l.orderNumber);
  int(3, enumValue(LeadStateEnum, l.state));
  text(4, l.leadStatus);
  text(5, l.externalId);
  timestamp(6, l.createdAt);
  timestamp(7, l.updatedAt);
  timestamp(8, l.stateChangedAt);
  text(9, l.firstName);
  text(10, l.lastName);
  text(11, l.email);
  text(12, l.phoneNumber);
  optionalText(13, l.companyName);
  optionalText(14, l.noteFromShipper);
  text(15, l.estimatedShipDate);
  int(16, enumValue(OverseasTypeEnum, l.overseasType));
  int(17, enumValue(ShipViaEnum, l.shipVia));
  place(18, l.origin);
  if (l.destination) place(19, l.destination);
  for (const v of l.vehicles) {
    const vehicle = fork(20);
    int(1, v.year);
    text(2, v.make);
    text(3, v.model);
    int(4, enumValue(VehicleTypeEnum, v.type));
    int64(5, v.tariff);
    int64(6, v.deposit);
    if (v.vehicleRun !== null && v.vehicleRun !== undefined) bool(7, v.vehicleRun);
    optionalText(8, v.vin);
    join(vehicle);
  }
  for (const h of l.history) {
    const entry = fork(21);
    if (h.fromState !== null) int(1, enumValue(LeadStateEnum, h.fromState));
    int(2, enumValue(LeadStateEnum, h.toState));
    text(3, h.leadStatus);
    timestamp(4, h.changedAt);
    text(5, h.actor);
    join(entry);
  }
  if (l.livemode) bool(22, true);
  text(23, l.phoneE164 ?? "");
  optionalText(24, l.subId);
  optionalText(25, l.sourceUrl);
  if (l.consent) {
    const c = l.consent;
    const consent = fork(26);
    optionalText(1, c.trustedFormCertUrl);
    optionalText(2, c.jornayaLeadId);
    optionalText(3, c.consentText);
    optionalText(4, c.consentedAt);
    optionalText(5, c.ipAddress);
    optionalText(6, c.userAgent);
    optionalText(7, c.pageUrl);
    optionalText(8, c.id ?? null);
    optionalText(9, c.textSha256 ?? null);
    join(consent);
  }
  if (l.duplicate) duplicate(l.duplicate);
  if (isBillable(l)) bool(28, true);
  if (l.price) {
    const price = fork(29);
    int64(1, l.price.amountCents);
    text(2, l.price.currency);
    text(3, l.price.rule);
    int(4, l.price.termsVersion);
    join(price);
  }
  if (l.return) {
    const r = l.return;
    const ret = fork(30);
    text(1, r.id);
    text(2, r.state);
    text(3, r.reason);
    optionalText(4, r.note);
    timestamp(5, r.requestedAt);
    timestamp(6, r.contestDeadline);
    if (r.decidedAt !== null) timestamp(7, r.decidedAt);
    optionalText(8, r.decisionNote);
    join(ret);
  }
  optionalText(31, l.source ?? null);
  join(at);
}

/**
 * The message `write` writes, optionally behind gRPC's 5-byte envelope (flags 0, then the length
 * big-endian), so the fast path sends the bytes without copying them into a frame.
 */
function bytes(write: () => void, envelope: boolean): Uint8Array {
  pos = 0;
  if (envelope) {
    ensure(5);
    buf[0] = 0;
    pos = 5;
  }
  write();
  if (envelope) buf.writeUInt32BE(pos - 5, 1);
  const out = Buffer.allocUnsafe(pos);
  buf.copy(out, 0, 0, pos);
  return out;
}

/** GetLeadResponse { lead } as bytes (with `envelope`, as one gRPC message frame). */
export function getLeadResponseBytes(l: Lead, envelope = false): Uint8Array {
  return bytes(() => lead(1, l), envelope);
}

/** CreateLeadResponse { lead, warnings } as bytes (with `envelope`, as one gRPC message frame). */
export function createLeadResponseBytes(l: Lead, warnings: readonly Warning[], envelope = false): Uint8Array {
  return bytes(() => {
    lead(1, l);
    for (const warning of warnings) {
      const at = fork(2);
      text(1, warning.field);
      text(2, warning.code);
      text(3, warning.message);
      join(at);
    }
  }, envelope);
}
