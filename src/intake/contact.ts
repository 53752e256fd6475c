/**
 * Contact and lead checks every lead gets, whoever sends it: the phone as libphonenumber reads
 * it (max metadata, US by default), the email's match key and whether its domain is disposable
 * (the disposable-email-domains list, as packaged by disposable-email-domains-js), and the VIN's
 * check digit. Pure functions; lead.validation.ts words their answers as field violations.
 */
import { disposableEmailBlocklist } from "disposable-email-domains-js";
import { type NumberType, parsePhoneNumberFromString } from "libphonenumber-js/max";

/** Number types that never reach the shipper: refused as `invalid_phone`. */
export const REFUSED_PHONE_TYPES: readonly NumberType[] = [
  "TOLL_FREE",
  "PREMIUM_RATE",
  "SHARED_COST",
  "UAN",
  "PAGER",
  "VOICEMAIL",
];

const TYPE_WORDS: Partial<Record<NonNullable<NumberType>, string>> = {
  TOLL_FREE: "a toll-free number",
  PREMIUM_RATE: "a premium-rate number",
  SHARED_COST: "a shared-cost number",
  UAN: "a universal access number",
  PAGER: "a pager number",
  VOICEMAIL: "a voicemail number",
};

export type PhoneCheck = { readonly e164: string } | { readonly problem: string };

/** The phone in E.164, or why it is refused. */
export function checkPhone(text: string): PhoneCheck {
  const parsed = parsePhoneNumberFromString(text, "US");
  if (!parsed?.isValid()) return { problem: "is not a valid phone number" };
  const type = parsed.getType();
  if (type !== undefined && REFUSED_PHONE_TYPES.includes(type)) {
    return { problem: `is ${TYPE_WORDS[type] ?? type}, not the shipper's own number` };
  }
  return { e164: parsed.number };
}

/**
 * The email as the duplicate check compares it: lower-cased whole. The domain is case-insensitive
 * by definition; the local part may be case-sensitive by RFC 5321, but no mailbox provider a
 * shipper uses treats it so, and comparing it as sent let `JO@example.com` pass as new.
 */
export function emailMatchKey(email: string): string {
  return email.toLowerCase();
}

/**
 * The package's list as one Set, built once: its own `isDisposableEmailDomain` builds a Set of the
 * whole list on every call (about 1 ms each; docs/upstream/disposable-email-domains-js-set.md).
 */
let disposable: ReadonlySet<string> | undefined;

/** Whether the email's domain, or a domain it is under (`x.mailinator.com`), is on the list. */
export function isDisposableEmail(email: string): boolean {
  disposable ??= new Set(disposableEmailBlocklist());
  const labels = email
    .slice(email.lastIndexOf("@") + 1)
    .toLowerCase()
    .split(".");
  for (let i = 0; i < labels.length - 1; i++) {
    if (disposable.has(labels.slice(i).join("."))) return true;
  }
  return false;
}

const VIN_VALUES = Object.fromEntries(
  [..."ABCDEFGHJKLMNPRSTUVWXYZ"].map((c, i) => [
    c,
    [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 7, 9, 2, 3, 4, 5, 6, 7, 8, 9][i],
  ]),
);
const VIN_WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];

/** The check digit a VIN's position 9 must hold (North American rule), or undefined for bad characters. */
export function vinCheckDigit(vin: string): string | undefined {
  let sum = 0;
  for (let i = 0; i < 17; i++) {
    const c = vin[i] as string;
    const value: number | undefined = c >= "0" && c <= "9" ? Number(c) : VIN_VALUES[c];
    if (value === undefined) return undefined;
    sum += value * (VIN_WEIGHTS[i] as number);
  }
  const r = sum % 11;
  return r === 10 ? "X" : String(r);
}

/** 17 characters of A–Z (no I, O, Q) and 0–9 whose position 9 is the check digit (upper case). */
export function isValidVin(vin: string): boolean {
  return /^[A-HJ-NPR-Z0-9]{17}$/.test(vin) && vinCheckDigit(vin) === vin[8];
}
