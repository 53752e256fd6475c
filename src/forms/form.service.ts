/**
 * The drop-in quote form (docs/forms.md): publishable keys and form settings for administrators
 * and the portal, and the form's own calls (config, challenge, ZIP, submission) for a page on one
 * of the provider's allowed origins. A submission runs the Public API's intake (leads.create) with
 * a generated external_id and the consent record the form made; every refusal before intake
 * stores nothing and counts against no cap.
 */
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import type { GateAdmission, ProviderPrincipal } from "../edge/identity.ts";
import { DomainError, type FieldViolation } from "../errors.ts";
import type { CreatedLead, CreateOptions } from "../leads/lead.service.ts";
import type { Consent, LeadOwner } from "../leads/lead.ts";
import type { Attempt, AttemptCounter, AttemptWindow } from "../rate-limit/rate-limiter.ts";
import type { ZipDirectory } from "../zip/zip-directory.ts";
import {
  findConsent,
  findKeyHolder,
  findSettings,
  formWeek,
  type KeyHolder,
  listKeys,
  type PublishableKeyRow,
  replaceKey,
  saveSettings,
} from "./form.repository.ts";
import {
  CONSENT_ID,
  defaultConsentText,
  FORM_VERSION,
  type FormMode,
  isPublishableKeyShape,
  MAX_CONSENT_TEXT,
  newFormIds,
  newPublishableKey,
  originAllowed,
  readAllowedOrigins,
  sha256Hex,
  validation,
} from "./form.ts";
import type { FormChallenges } from "./form-challenge.ts";

/** Largest form submission (the Public API allows 64 KiB; a person's form is far smaller). */
export const FORM_BODY_LIMIT = 32 * 1024;

/** Members of a form submission that are the form's, not the lead's. */
const FORM_MEMBERS = new Set(["consent", "page_url", "altcha", "turnstile", "company_website", "publishable_key"]);
const CONSENT_MEMBERS = new Set(["accepted", "text_sha256", "accepted_at", "trusted_form_cert_url", "jornaya_lead_id"]);
const TRUSTED_FORM = /^https:\/\/cert\.trustedform\.com\/[0-9a-f]{40}$/;
const JORNAYA = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters (but tab and line breaks) is the point
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** GET requests of the form (config, challenge, ZIP) per client address and key per minute. */
const READS_PER_MINUTE = 120;

export interface FormSettingsView {
  readonly allowedOrigins: readonly string[];
  readonly consentText: string;
  readonly consentTextIsDefault: boolean;
  readonly enabled: boolean;
  readonly updatedAt: Date | null;
  readonly keys: Readonly<Record<FormMode, PublishableKeyRow | null>>;
}

/** A page of an allowed origin calling with a publishable key. */
export interface FormCaller {
  readonly key: string;
  readonly origin: string;
  readonly holder: KeyHolder;
  /** The provider as the Public API's rules see it (rate limits, request log). */
  readonly principal: ProviderPrincipal;
}

export interface SubmissionContext {
  readonly clientIp: string | undefined;
  readonly userAgent: string | undefined;
}

export interface FormSubmitted {
  readonly created: CreatedLead;
  readonly consentId: string;
}

export interface FormServiceDeps {
  readonly db: Kysely<Database>;
  readonly now: () => Date;
  readonly zips: ZipDirectory;
  readonly challenges: FormChallenges;
  readonly brokerName: string;
  readonly limitPerIpPerHour: number;
  readonly admission: Pick<GateAdmission, "provider" | "guardAuth">;
  readonly attempts: {
    takeAttempt(counters: readonly AttemptCounter[], window?: AttemptWindow): Promise<Attempt>;
  };
  readonly leads: { create(owner: LeadOwner, input: unknown, how: CreateOptions): Promise<CreatedLead> };
  /** The business week's first instant (BUSINESS_TIMEZONE, Monday), for the Form page's counts. */
  readonly weekStart: (at: Date) => Date;
}

export type FormService = ReturnType<typeof createFormService>;

const modeOf = (livemode: boolean): FormMode => (livemode ? "live" : "test");

function providerNotFound(id: number): DomainError {
  return new DomainError("not_found", `no provider with id ${id}`, { code: "provider_not_found" });
}

function refused(code: string, message: string, status: "unauthenticated" | "permission_denied"): DomainError {
  return new DomainError(status, message, { code });
}

/** The text of a refusal that a person on the provider's page reads: nothing about other providers. */
const PUBLIC_REFUSALS: Record<string, string> = {
  duplicate_lead: "we already have a quote request with this phone number or email address",
  cap_reached: "we cannot take more quote requests here today; please try again later",
  intake_closed: "quote requests are closed right now; please try again later",
  intake_paused: "quote requests are paused right now; please try again later",
  outside_criteria: "we cannot take this shipment through this form",
};

export function createFormService(deps: FormServiceDeps) {
  const effectiveText = (stored: string | null) => stored ?? defaultConsentText(deps.brokerName);

  async function requireProvider(providerId: number): Promise<void> {
    const row = await deps.db.selectFrom("providers").select("id").where("id", "=", providerId).executeTakeFirst();
    if (!row) throw providerNotFound(providerId);
  }

  async function view(providerId: number): Promise<FormSettingsView> {
    const [s, keys] = await Promise.all([findSettings(deps.db, providerId), listKeys(deps.db, providerId)]);
    return {
      allowedOrigins: s.allowedOrigins,
      consentText: effectiveText(s.consentText),
      consentTextIsDefault: s.consentText === null,
      enabled: s.enabled,
      updatedAt: s.updatedAt,
      keys: {
        live: keys.find((k) => k.livemode) ?? null,
        test: keys.find((k) => !k.livemode) ?? null,
      },
    };
  }

  function readSettings(body: unknown): { allowedOrigins: string[]; consentText: string | null; enabled: boolean } {
    const b = (body ?? {}) as Record<string, unknown>;
    const violations: FieldViolation[] = [];
    let allowedOrigins: string[] = [];
    try {
      allowedOrigins = readAllowedOrigins(b.allowed_origins);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      violations.push(...err.violations);
    }
    let consentText: string | null = null;
    if (b.consent_text !== null && b.consent_text !== undefined) {
      if (typeof b.consent_text !== "string") {
        violations.push({ field: "consent_text", code: "invalid_type", message: "consent_text must be text or null" });
      } else {
        const text = b.consent_text.trim();
        if (text.length < 20 || text.length > MAX_CONSENT_TEXT) {
          violations.push({
            field: "consent_text",
            code: "invalid_length",
            message: `consent_text must be 20 to ${MAX_CONSENT_TEXT} characters (null: the default text)`,
          });
        } else if (CONTROL_IN_TEXT.test(text)) {
          violations.push({
            field: "consent_text",
            code: "invalid_format",
            message: "consent_text has control characters",
          });
        } else consentText = text;
      }
    }
    if (typeof b.enabled !== "boolean") {
      violations.push({ field: "enabled", code: "invalid_type", message: "enabled must be true or false" });
    }
    if (violations.length > 0) throw validation(violations);
    return { allowedOrigins, consentText, enabled: b.enabled as boolean };
  }

  /** Verifies the key and the page's origin; the same refusal for an unknown key as for a lookalike. */
  async function caller(
    key: string | undefined,
    origin: string | undefined,
    clientIp: string | undefined,
  ): Promise<FormCaller> {
    if (key === undefined || key === "") {
      throw refused(
        "publishable_key_required",
        "send the form's publishable key (lp_pub_…) in the X-Publishable-Key header",
        "unauthenticated",
      );
    }
    if (/^lp_(live|test)_/.test(key)) {
      // A secret key pasted into a page: refused, and never looked up.
      throw refused(
        "secret_key_refused",
        "this is a secret API key: never put it on a web page; revoke it now and use the publishable key (lp_pub_…)",
        "unauthenticated",
      );
    }
    const holder = await deps.admission.guardAuth(clientIp, true, async () => {
      const found = isPublishableKeyShape(key) ? await findKeyHolder(deps.db, key) : undefined;
      if (!found?.active) {
        throw refused("publishable_key_invalid", "the publishable key is not valid", "unauthenticated");
      }
      return found;
    });
    if (origin === undefined || origin === "" || origin === "null") {
      throw refused(
        "origin_required",
        "the form works only from a web page: the request carries no Origin",
        "permission_denied",
      );
    }
    if (!originAllowed(origin, holder.livemode, holder.settings.allowedOrigins)) {
      throw refused(
        "origin_not_allowed",
        `${origin.slice(0, 200)} is not an allowed origin of this form (add it in the portal's Form page)`,
        "permission_denied",
      );
    }
    return {
      key,
      origin,
      holder,
      principal: {
        providerId: holder.providerId,
        livemode: holder.livemode,
        keyId: 0,
        perMinute: holder.perMinute,
        perDay: holder.perDay,
      },
    };
  }

  function enabledOrRefuse(c: FormCaller): void {
    if (!c.holder.settings.enabled) {
      throw new DomainError("permission_denied", "this form is switched off", { code: "form_disabled" });
    }
  }

  async function take(counter: AttemptCounter, window: AttemptWindow, what: string): Promise<void> {
    const taken = await deps.attempts.takeAttempt([counter], window);
    if (!taken.admitted) {
      throw new DomainError(
        "rate_limited",
        `too many ${what} from this address; retry in ${taken.retryAfterSeconds} s`,
        {
          code: "rate_limited",
          ...(window === "minute" && { window: "minute" as const }),
          retryAfterSeconds: taken.retryAfterSeconds,
        },
      );
    }
  }

  function readConsent(
    raw: unknown,
    text: string,
    at: Date,
  ): { violations: FieldViolation[]; browserTime: string | null; tf: string | null; jornaya: string | null } {
    const violations: FieldViolation[] = [];
    const add = (field: string, code: string, message: string) => violations.push({ field, code, message });
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      add("consent.accepted", "consent_required", "tick the consent box to send the request");
      return { violations, browserTime: null, tf: null, jornaya: null };
    }
    const c = raw as Record<string, unknown>;
    for (const k of Object.keys(c))
      if (!CONSENT_MEMBERS.has(k)) add(`consent.${k}`, "unknown_field", `consent.${k} is not a consent member`);
    if (c.accepted !== true) add("consent.accepted", "consent_required", "tick the consent box to send the request");
    if (c.text_sha256 !== sha256Hex(text)) {
      add(
        "consent.text_sha256",
        "consent_text_changed",
        "the consent text changed since this page was loaded; reload the page and read it again",
      );
    }
    let browserTime: string | null = null;
    if (c.accepted_at !== undefined && c.accepted_at !== null) {
      if (typeof c.accepted_at !== "string" || c.accepted_at.length > 40 || !RFC3339.test(c.accepted_at)) {
        add("consent.accepted_at", "invalid_format", "consent.accepted_at must be an RFC 3339 date-time");
      } else browserTime = c.accepted_at;
    }
    const tf = c.trusted_form_cert_url;
    if (tf !== undefined && tf !== null && (typeof tf !== "string" || !TRUSTED_FORM.test(tf))) {
      add(
        "consent.trusted_form_cert_url",
        "invalid_format",
        "consent.trusted_form_cert_url must be https://cert.trustedform.com/ and 40 hex characters",
      );
    }
    const jl = c.jornaya_lead_id;
    if (jl !== undefined && jl !== null && (typeof jl !== "string" || !JORNAYA.test(jl))) {
      add("consent.jornaya_lead_id", "invalid_format", "consent.jornaya_lead_id must be a UUID");
    }
    void at;
    return {
      violations,
      browserTime,
      tf: typeof tf === "string" && violations.length === 0 ? tf : null,
      jornaya: typeof jl === "string" && violations.length === 0 ? jl : null,
    };
  }

  function readPageUrl(raw: unknown): { url: string | null; violation?: FieldViolation } {
    if (raw === undefined || raw === null || raw === "") return { url: null };
    if (typeof raw === "string" && raw.length <= 2048) {
      try {
        const u = new URL(raw);
        if (u.protocol === "https:" || u.protocol === "http:") return { url: raw };
      } catch {}
    }
    return {
      url: null,
      violation: {
        field: "page_url",
        code: "invalid_format",
        message: "page_url must be an absolute http(s) URL of at most 2048 characters",
      },
    };
  }

  /** The refusal as the page may show it: the same code, a sentence for a person, nothing about other providers. */
  function forThePage(err: unknown): unknown {
    if (!(err instanceof DomainError)) return err;
    const text = PUBLIC_REFUSALS[err.code];
    if (text === undefined) return err;
    return new DomainError(err.kind, text, {
      code: err.code,
      violations: err.violations,
      ...(err.retryAfterSeconds !== undefined && { retryAfterSeconds: err.retryAfterSeconds }),
    });
  }

  return {
    /** The form settings of a provider (administrators). */
    async settings(providerId: number): Promise<FormSettingsView> {
      await requireProvider(providerId);
      return view(providerId);
    },

    /** Replaces the provider's form settings; audited. */
    async updateSettings(actor: string, providerId: number, body: unknown): Promise<FormSettingsView> {
      await requireProvider(providerId);
      const s = readSettings(body);
      await deps.db.transaction().execute(async (trx) => {
        await saveSettings(trx, providerId, s, actor, deps.now());
        await recordAudit(trx, {
          actor,
          action: "form_settings.updated",
          targetType: "provider",
          targetId: String(providerId),
          details: {
            provider_id: providerId,
            allowed_origins: s.allowedOrigins,
            enabled: s.enabled,
            consent_text_default: s.consentText === null,
          },
        });
      });
      return view(providerId);
    },

    /** Issues the provider's publishable key of the mode, replacing (and so stopping) the old one; audited. */
    async rotateKey(actor: string, providerId: number, modeRaw: unknown): Promise<PublishableKeyRow> {
      if (modeRaw !== "live" && modeRaw !== "test") {
        throw validation([{ field: "mode", code: "invalid_value", message: "mode must be live or test" }]);
      }
      await requireProvider(providerId);
      const mode: FormMode = modeRaw;
      return deps.db.transaction().execute(async (trx) => {
        const row = await replaceKey(trx, providerId, mode === "live", newPublishableKey(mode), actor, deps.now());
        await recordAudit(trx, {
          actor,
          action: "publishable_key.issued",
          targetType: "provider",
          targetId: String(providerId),
          details: { provider_id: providerId, mode },
        });
        return row;
      });
    },

    caller,

    /** Whether any provider allows this origin (a preflight without a key: nothing more is known). */
    async anyAllows(origin: string): Promise<boolean> {
      const row = await deps.db
        .selectFrom("form_settings")
        .select("provider_id")
        .where((eb) => eb("allowed_origins", "@>", JSON.stringify([origin]) as never))
        .where("enabled", "=", true)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Counts a read (config, challenge, ZIP) against the address's per-minute allowance for the key. */
    async read(c: FormCaller, clientIp: string | undefined): Promise<void> {
      enabledOrRefuse(c);
      await take(
        { key: `form-read:${c.key}:${clientIp ?? "unknown"}`, limit: READS_PER_MINUTE },
        "minute",
        "form requests",
      );
    },

    /** What the form shows and sends: the consent text (and its hash), the broker, the bot check. */
    config(c: FormCaller) {
      const text = effectiveText(c.holder.settings.consentText);
      return {
        livemode: c.holder.livemode,
        brokerName: deps.brokerName,
        consentText: text,
        consentTextSha256: sha256Hex(text),
        formVersion: FORM_VERSION,
        challenge: deps.challenges.kind,
        turnstileSiteKey: deps.challenges.turnstileSiteKey,
      };
    },

    challenge: () => deps.challenges.challenge(),

    zip(zip: string) {
      const place = /^[0-9]{5}$/.test(zip) ? deps.zips.lookup(zip) : undefined;
      if (!place) {
        throw new DomainError("not_found", `${zip.slice(0, 10)} is not a US ZIP code we know`, {
          code: "zip_not_found",
        });
      }
      return { zip: place.zip, city: place.city, state: place.stateCode };
    },

    /**
     * A form submission: per-address and provider limits, honeypot, bot check, consent, then the
     * Public API's intake with a generated external_id and the consent record. Nothing is stored
     * when any of them refuses.
     */
    async submit(c: FormCaller, body: unknown, ctx: SubmissionContext): Promise<FormSubmitted> {
      enabledOrRefuse(c);
      await take(
        { key: `form:${c.key}:${ctx.clientIp ?? "unknown"}`, limit: deps.limitPerIpPerHour },
        "hour",
        "form submissions",
      );
      await deps.admission.provider(c.principal.providerId, c.principal, c.principal.livemode);
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        throw validation([{ field: "body", code: "invalid_type", message: "the body must be a JSON object" }]);
      }
      const b = body as Record<string, unknown>;
      if (b.company_website !== undefined && b.company_website !== null && b.company_website !== "") {
        throw new DomainError("invalid_argument", "the form was filled by a program, not a person", {
          code: "honeypot_filled",
        });
      }
      await deps.challenges.check(b, ctx.clientIp);

      const at = deps.now();
      const text = effectiveText(c.holder.settings.consentText);
      const consent = readConsent(b.consent, text, at);
      const page = readPageUrl(b.page_url);
      const violations = [...consent.violations, ...(page.violation ? [page.violation] : [])];
      if (b.external_id !== undefined) {
        violations.push({
          field: "external_id",
          code: "not_allowed",
          message: "external_id is given by the service to a form lead (form_…); do not send it",
        });
      }
      if (b.source_url !== undefined) {
        violations.push({ field: "source_url", code: "not_allowed", message: "the form sends the page in page_url" });
      }
      if (violations.length > 0) throw validation(violations);

      const fields: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(b)) if (!FORM_MEMBERS.has(k)) fields[k] = v;
      const ids = newFormIds();
      const record: Consent = {
        id: ids.consentId,
        consentText: text,
        textSha256: sha256Hex(text),
        accepted: true,
        consentedAt: at.toISOString(),
        browserTime: consent.browserTime,
        pageUrl: page.url,
        origin: c.origin,
        ipAddress: ctx.clientIp ?? null,
        userAgent: ctx.userAgent?.slice(0, 512) ?? null,
        formVersion: FORM_VERSION,
        trustedFormCertUrl: consent.tf,
        jornayaLeadId: consent.jornaya,
        fields,
      };
      // A person asks for a price: a vehicle's tariff and deposit are not theirs to give (0 until quoted).
      const vehicles = Array.isArray(fields.vehicles)
        ? fields.vehicles.map((v) =>
            v !== null && typeof v === "object" && !Array.isArray(v) ? { tariff: 0, deposit: 0, ...v } : v,
          )
        : fields.vehicles;
      const input = { ...fields, vehicles, external_id: ids.externalId, source_url: page.url, consent: null };
      try {
        const created = await deps.leads.create(c.principal, input, { source: "form", consent: record });
        return { created, consentId: ids.consentId };
      } catch (err) {
        throw forThePage(err);
      }
    },

    /** A consent record by its id: any provider's (administrators) or only `providerId`'s (the portal). */
    async consent(consentId: string, providerId?: number) {
      const found = CONSENT_ID.test(consentId) ? await findConsent(deps.db, consentId, providerId) : undefined;
      if (!found) {
        throw new DomainError("not_found", `no consent record ${consentId.slice(0, 40)}`, {
          code: "consent_not_found",
        });
      }
      return found;
    },

    /** This business week's form leads and refusals of a provider and mode (the portal's Form page). */
    async week(providerId: number, livemode: boolean) {
      const since = deps.weekStart(deps.now());
      return { since, ...(await formWeek(deps.db, providerId, livemode, since)) };
    },

    modeOf,
  };
}
