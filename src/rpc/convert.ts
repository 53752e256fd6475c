/** Small conversions between protobuf values and the service layer's plain values. */
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";

type EnumObject = Readonly<Record<string, number>>;

/**
 * The domain name of a protobuf enum value: `OPEN` for ShipVia.OPEN, undefined for the zero
 * value (not set), and the number as text for values this server does not know, so the
 * service reports them as invalid rather than missing.
 */
export function enumName(values: EnumObject, n: number): string | undefined {
  if (n === 0) return undefined;
  for (const [name, value] of Object.entries(values)) if (value === n) return name;
  return String(n);
}

export function enumValue<T extends number>(values: Readonly<Record<string, T>>, name: string): T {
  const v = values[name];
  if (v === undefined) throw new Error(`no enum value named ${name}`);
  return v;
}

/** Proto3 strings have no presence: an empty string means "not sent". */
export function optionalText(s: string | undefined): string | undefined {
  return s === undefined || s === "" ? undefined : s;
}

export function toInt(n: bigint | undefined): number | undefined {
  return n === undefined ? undefined : Number(n);
}

export const ts = (d: Date): Timestamp => timestampFromDate(d);
export const tsOpt = (d: Date | null | undefined): Timestamp | undefined => (d ? timestampFromDate(d) : undefined);
export const dateOf = (t: Timestamp | undefined): Date | undefined => (t ? timestampDate(t) : undefined);
