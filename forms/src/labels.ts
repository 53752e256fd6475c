/**
 * The form's English words. A page overrides any of them with the element's `labels` attribute
 * (JSON, e.g. `labels='{"submit": "Send"}'`) or one attribute per word (`label-submit="Send"`;
 * the key with `_` written as `-`). docs/forms.md lists them.
 */
export const LABELS = {
  loading: "Loading the quote form…",
  unreachable:
    "The quote form could not reach the quote service. If this is your site, check that this page's address ({origin}) is among the form's allowed origins.",
  route: "Where is it going?",
  origin_zip: "Pickup ZIP code",
  destination_zip: "Delivery ZIP code",
  zip_unknown: "We do not know this ZIP code; check it.",
  zip_format: "Enter a 5-digit ZIP code.",
  estimated_ship_date: "Ship date",
  shipping: "How should it ship?",
  overseas_type: "Destination",
  domestic: "Within the US",
  foreign: "Overseas",
  ship_via: "Shipping method",
  vehicles: "Vehicles",
  vehicle: "Vehicle {n}",
  year: "Year",
  make: "Make",
  model: "Model",
  type: "Type",
  vehicle_run: "Does it run?",
  runs_yes: "Yes, it runs",
  runs_no: "No",
  add_vehicle: "Add a vehicle",
  remove_vehicle: "Remove vehicle {n}",
  contact: "Your details",
  first_name: "First name",
  last_name: "Last name",
  email: "Email",
  phone_number: "Phone",
  consent_required: "Tick this box to let us contact you about your quote.",
  submit: "Get my quote",
  sending: "Sending…",
  checking: "Checking this browser before sending…",
  required: "Fill in this field.",
  year_range: "Enter a year from 1900 to {max}.",
  email_shape: "Enter an email address such as name@example.com.",
  phone_shape: "Enter a phone number of 7 to 15 digits (digits, spaces and + ( ) - . only).",
  date_past: "Choose today or a later date.",
  fix_field: "Please correct the field marked below.",
  fix_fields: "Please correct the {n} fields marked below.",
  refused: "We could not send your request: {detail}",
  unavailable: "The quote form is not available: {detail}",
  retry_after: "Too many requests from here; please try again in {s} seconds.",
  challenge_again: "The browser check has to run again; it runs by itself. Please send again in a moment.",
  success: "Thank you! Your quote request {order} was received. We will be in touch soon.",
  test_mode: "Test mode: requests sent here are not real leads.",
  preview: "Preview: this form sends nothing.",
  company_website: "Company website (leave empty)",
} as const;

export type LabelKey = keyof typeof LABELS;
export type Labels = Record<LabelKey, string>;

/** The words, each override applied when it is a string; `{name}` placeholders filled later. */
export function labelsOf(json: string | null, attr: (name: string) => string | null): Labels {
  let given: Record<string, unknown> = {};
  if (json) {
    try {
      const parsed: unknown = JSON.parse(json);
      if (parsed && typeof parsed === "object") given = parsed as Record<string, unknown>;
    } catch {
      // A malformed labels attribute leaves the English words.
    }
  }
  const out = { ...LABELS } as Labels;
  for (const key of Object.keys(LABELS) as LabelKey[]) {
    const one = attr(`label-${key.replaceAll("_", "-")}`);
    const v = one ?? given[key];
    if (typeof v === "string" && v !== "") out[key] = v;
  }
  return out;
}

/** A word with its `{name}` placeholders replaced (as text: the result is only ever set as textContent). */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k]) : m));
}
