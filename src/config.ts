/**
 * The only reader of process.env. Every variable is parsed and checked here, once, at start-up;
 * `loadConfig` lists every bad variable at once instead of failing on the first.
 */

import { isIP } from "node:net";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface Config {
  /** NODE_ENV, lower-cased; unset is `development`. */
  readonly nodeEnv: string;
  /** Production's rules (real secrets, PUBLIC_BASE_URL, https public webhook targets): every NODE_ENV but development and test. */
  readonly production: boolean;
  readonly host: string;
  readonly port: number;
  /** Postgres connection string; undefined → embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly databasePoolSize: number;
  /** Milliseconds a request waits for a database connection before 503. */
  readonly databaseTimeoutMs: number;
  readonly redisUrl: string | undefined;
  /** WEB_CONCURRENCY: worker processes on the one port (1: this process serves; see cluster.ts). */
  readonly webConcurrency: number;
  /** Prefix of this deployment's rate-limit keys in Redis. */
  readonly redisNamespace: string;
  readonly jwt: {
    /** HS256 secret; undefined when JWKS is used. */
    readonly secret: string | undefined;
    readonly jwksUrl: string | undefined;
    readonly jwksAlgorithms: readonly string[];
    readonly issuer: string | undefined;
    readonly audience: string | undefined;
    readonly adminClaim: string;
    readonly adminValue: string;
    /** The claim and value that let an internal system use the lead workflow service. */
    readonly workflowClaim: string;
    readonly workflowValue: string;
    /** Longest accepted lifetime of a token, from `iat` (or `nbf`) to `exp`, in seconds. */
    readonly maxLifetimeSeconds: number;
    /** True when the secret is the built-in development one. */
    readonly usingDevSecret: boolean;
  };
  /** Master secret from which the API-key HMAC and encryption keys are derived. */
  readonly apiKeySecret: string;
  readonly usingDevApiKeySecret: boolean;
  readonly logLevel: LogLevel;
  /**
   * FAST_PATHS (default on): a lead's GET and POST over REST and plain gRPC are served by the
   * speed-only paths of leads/fast/; off: every request goes through Express and connect-node.
   */
  readonly fastPaths: boolean;
  /** Validate responses against openapi.yaml (500 on drift). On in tests. */
  readonly validateResponses: boolean;
  /** Bearer token that opens /metrics on the main port; unset → /metrics is not served there. */
  readonly metricsToken: string | undefined;
  /** Separate admin listener for /metrics (no token), on `metricsHost`. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  readonly rateLimit: {
    readonly defaultPerMinute: number;
    readonly defaultPerDay: number;
    /** Failed authentications allowed per client IP per minute. */
    readonly authFailuresPerMinute: number;
  };
  readonly shutdownTimeoutMs: number;
  /**
   * Which proxies in front of the service are trusted to report the client address
   * (X-Forwarded-For), in proxy-addr's terms: a hop count, or addresses/CIDRs; false: none.
   */
  readonly trustProxy: false | number | readonly string[];
  /**
   * PUBLIC_BASE_URL: the service's origin, for absolute links (pagination, portal invites) and the
   * portal's expected Origin; required under production's rules. Undefined (development and test
   * only): pagination links are relative, and the portal uses the request's own (checked) Host.
   */
  readonly publicBaseUrl: string | undefined;
  /** Test (sandbox) leads older than this many days are deleted. */
  readonly sandboxRetentionDays: number;
  /** EVENT_RETENTION_DAYS (default 180, at least 7): lead events older than this are deleted. */
  readonly eventRetentionDays: number;
  /**
   * DELIVERY_RETENTION_DAYS (default 90, at least 7): finished webhook deliveries (and test sends)
   * older than this are deleted; pending ones are kept.
   */
  readonly deliveryRetentionDays: number;
  /** The provider portal (/portal/). */
  readonly portal: {
    /** PORTAL_REQUIRE_2FA (default false): every portal user must set up a TOTP second factor. */
    readonly requireSecondFactor: boolean;
    /** SMTP_URL (smtp:// or smtps://): invites are also e-mailed; unset: the administrator hands the link over. */
    readonly smtpUrl: string | undefined;
    /** SMTP_FROM: the invites' sender. */
    readonly mailFrom: string;
  };
  /** The request log (request-log/): on or off, how long entries are kept, how often providers may read it. */
  readonly requestLog: {
    /** REQUEST_LOG_ENABLED (default true). */
    readonly enabled: boolean;
    /** REQUEST_LOG_RETENTION_DAYS (default 30). */
    readonly retentionDays: number;
    /** REQUEST_LOG_READS_PER_MINUTE: a provider's reads of its log and stats, apart from its API limits. */
    readonly readsPerMinute: number;
  };
  /** Lead intake (intake/): the broker's calendar and the duplicate check. */
  readonly intake: {
    /** BUSINESS_TIMEZONE (IANA): days, weeks, months, schedules and "yesterday". */
    readonly businessTimezone: string;
    /** DUPLICATE_WINDOW_DAYS: how far back the duplicate check looks. */
    readonly duplicateWindowDays: number;
    /** DUPLICATE_MATCH: the fields the duplicate check compares. */
    readonly duplicateMatch: readonly DuplicateField[];
  };
  /** Money (money/): the ledger's currency, the settlement job's interval, and pricing on or off. */
  readonly money: {
    /** LEDGER_CURRENCY (ISO 4217, default USD): the one currency of terms, prices and the ledger. */
    readonly currency: string;
    /** SETTLEMENT_INTERVAL_SECONDS (default 60): how often the settlement job looks for due purchases. */
    readonly settlementIntervalMs: number;
    /** RETURNS_INTERVAL_SECONDS (default 60): how often uncontested returns past their deadline are approved. */
    readonly returnsIntervalMs: number;
    /**
     * LEDGER_ENABLED (default true). False: leads are stored without a price and nothing is
     * posted (for measuring what pricing costs; the ledger's reads still answer).
     */
    readonly enabled: boolean;
  };
  /** The drop-in quote form (forms/). */
  readonly forms: {
    /** BROKER_NAME: who the consent text names as the one who will call (default "the broker"). */
    readonly brokerName: string;
    /** FORM_LIMIT_PER_IP_PER_HOUR (default 10): form submissions per client address and publishable key per clock hour. */
    readonly limitPerIpPerHour: number;
    /** TURNSTILE_SECRET (with TURNSTILE_SITE_KEY): Cloudflare Turnstile instead of the ALTCHA proof of work. */
    readonly turnstile:
      | { readonly secret: string; readonly siteKey: string | undefined; readonly verifyUrl: string }
      | undefined;
  };
  readonly webhooks: {
    /** Deliveries this instance sends at once; 0: this instance sends none. */
    readonly concurrency: number;
    /** Deliveries one endpoint may have in flight at once, across every instance. */
    readonly perEndpoint: number;
    /** Of this instance's slots, at most this many send test-mode (sandbox) deliveries. */
    readonly testConcurrency: number;
    /** Time for one delivery attempt (connect, send, answer). */
    readonly timeoutMs: number;
    /** Waits between attempts, in milliseconds; after the last one a delivery is failed. */
    readonly retryScheduleMs: readonly number[];
    /** Private, loopback and link-local targets allowed (NODE_ENV development or test only). */
    readonly allowPrivateTargets: boolean;
    /** Ports a webhook_url may name under production's rules (WEBHOOK_ALLOWED_PORTS; 443 and 80). */
    readonly allowedPorts: readonly number[];
  };
}

import { DEV_API_KEY_SECRET, DEV_JWT_SECRET } from "./dev-secrets.ts";
import { DEFAULT_BUSINESS_TIMEZONE, isKnownTimeZone } from "./time-zone.ts";

export { DEV_API_KEY_SECRET, DEV_JWT_SECRET };

export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (["1", "true", "yes"].includes(raw.toLowerCase())) return true;
    if (["0", "false", "no"].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const onOff = (name: string, fallback: boolean): boolean => {
    const raw = str(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (["on", "1", "true", "yes"].includes(raw)) return true;
    if (["off", "0", "false", "no"].includes(raw)) return false;
    problems.push(`${name} must be on or off (got "${raw}")`);
    return fallback;
  };
  const url = (name: string, protocols: readonly string[]): string | undefined => {
    const raw = str(name);
    if (raw === undefined) return undefined;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) throw new Error("protocol");
      return raw;
    } catch {
      problems.push(`${name} must be a ${protocols.join(" or ")} URL`);
      return undefined;
    }
  };

  // NODE_ENV is compared case-insensitively. Only `development` (the default when unset) and
  // `test` may run on the built-in development secrets or send webhooks to private addresses;
  // every other value (production, staging, Production, …) is held to production's rules.
  const nodeEnv = (str("NODE_ENV") ?? "development").toLowerCase();
  const development = nodeEnv === "development" || nodeEnv === "test";
  const production = !development;

  const logLevel = (str("LOG_LEVEL") ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);

  const jwtSecretRaw = str("JWT_SECRET");
  const jwksUrl = url("JWT_JWKS_URL", ["http:", "https:"]);
  const metricsTokenRaw = str("METRICS_TOKEN");
  if (metricsTokenRaw !== undefined && metricsTokenRaw.length < 16)
    problems.push("METRICS_TOKEN must be at least 16 characters");
  if (jwtSecretRaw !== undefined && jwtSecretRaw.length < 32) {
    problems.push("JWT_SECRET must be at least 32 characters");
  }
  if (jwtSecretRaw !== undefined && jwksUrl !== undefined) {
    problems.push("set JWT_SECRET or JWT_JWKS_URL, not both");
  }
  const usingDevSecret = jwtSecretRaw === undefined && jwksUrl === undefined;
  if (production && usingDevSecret) {
    problems.push(
      `JWT_SECRET or JWT_JWKS_URL is required unless NODE_ENV is development or test (NODE_ENV=${nodeEnv})`,
    );
  }

  const apiKeySecretRaw = str("API_KEY_SECRET");
  if (apiKeySecretRaw !== undefined && apiKeySecretRaw.length < 32) {
    problems.push("API_KEY_SECRET must be at least 32 characters");
  }
  if (production && apiKeySecretRaw === undefined) {
    problems.push(`API_KEY_SECRET is required unless NODE_ENV is development or test (NODE_ENV=${nodeEnv})`);
  }

  // Without it, the portal's invite links and expected Origin come from each request's Host.
  if (production && str("PUBLIC_BASE_URL") === undefined) {
    problems.push(`PUBLIC_BASE_URL is required unless NODE_ENV is development or test (NODE_ENV=${nodeEnv})`);
  }

  const jwksAlgorithms = (str("JWT_JWKS_ALGORITHMS") ?? "RS256,ES256").split(",").map((a) => a.trim());
  for (const alg of jwksAlgorithms) {
    if (!/^(RS|PS|ES)(256|384|512)$|^EdDSA$/.test(alg)) {
      problems.push(`JWT_JWKS_ALGORITHMS: "${alg}" is not an asymmetric JWS algorithm`);
    }
  }

  const webConcurrency = int("WEB_CONCURRENCY", 1, 1, 64);
  const webhookConcurrency = int("WEBHOOK_CONCURRENCY", 16, 0, 256);
  const config: Config = {
    nodeEnv,
    production,
    host: str("HOST") ?? "0.0.0.0",
    port: int("PORT", 8080, 0, 65535),
    databaseUrl: url("DATABASE_URL", ["postgres:", "postgresql:"]),
    dataDir: str("DATA_DIR") ?? "./.data",
    databasePoolSize: int("DATABASE_POOL_SIZE", 10, 1, 200),
    databaseTimeoutMs: int("DATABASE_TIMEOUT_MS", 3000, 100, 60000),
    redisUrl: url("REDIS_URL", ["redis:", "rediss:"]),
    redisNamespace: str("REDIS_NAMESPACE") ?? "lead-provider",
    jwt: {
      secret: usingDevSecret ? DEV_JWT_SECRET : jwtSecretRaw,
      jwksUrl,
      jwksAlgorithms,
      issuer: str("JWT_ISSUER"),
      audience: str("JWT_AUDIENCE"),
      adminClaim: str("JWT_ADMIN_CLAIM") ?? "position",
      adminValue: str("JWT_ADMIN_VALUE") ?? "ADMIN",
      workflowClaim: str("JWT_WORKFLOW_CLAIM") ?? str("JWT_ADMIN_CLAIM") ?? "position",
      workflowValue: str("JWT_WORKFLOW_VALUE") ?? str("JWT_ADMIN_VALUE") ?? "ADMIN",
      maxLifetimeSeconds: int("JWT_MAX_LIFETIME_SECONDS", 86_400, 60, 30 * 86_400),
      usingDevSecret,
    },
    apiKeySecret: apiKeySecretRaw ?? DEV_API_KEY_SECRET,
    usingDevApiKeySecret: apiKeySecretRaw === undefined,
    logLevel,
    fastPaths: onOff("FAST_PATHS", true),
    validateResponses: bool("VALIDATE_RESPONSES", false),
    metricsToken: str("METRICS_TOKEN"),
    metricsPort: str("METRICS_PORT") === undefined ? undefined : int("METRICS_PORT", 9464, 0, 65535),
    metricsHost: str("METRICS_HOST") ?? "127.0.0.1",
    rateLimit: {
      defaultPerMinute: int("RATE_LIMIT_PER_MINUTE", 60, 1, 1_000_000),
      defaultPerDay: int("RATE_LIMIT_PER_DAY", 2000, 1, 100_000_000),
      authFailuresPerMinute: int("AUTH_FAILURES_PER_MINUTE", 30, 1, 1_000_000),
    },
    shutdownTimeoutMs: int("SHUTDOWN_TIMEOUT_MS", 8000, 100, 120_000),
    webConcurrency,
    trustProxy: trustProxy(str("TRUST_PROXY"), problems),
    publicBaseUrl: origin(str("PUBLIC_BASE_URL"), problems),
    sandboxRetentionDays: int("SANDBOX_RETENTION_DAYS", 30, 1, 3650),
    // At least a week: past the webhook retry schedule (3 days), so no delivery is still pending.
    eventRetentionDays: int("EVENT_RETENTION_DAYS", 180, 7, 36500),
    deliveryRetentionDays: int("DELIVERY_RETENTION_DAYS", 90, 7, 36500),
    portal: {
      requireSecondFactor: bool("PORTAL_REQUIRE_2FA", false),
      smtpUrl: smtpUrl(str("SMTP_URL"), problems),
      mailFrom: str("SMTP_FROM") ?? "Lead Provider portal <no-reply@localhost>",
    },
    requestLog: {
      enabled: bool("REQUEST_LOG_ENABLED", true),
      retentionDays: int("REQUEST_LOG_RETENTION_DAYS", 30, 1, 3650),
      readsPerMinute: int("REQUEST_LOG_READS_PER_MINUTE", 60, 1, 100_000),
    },
    intake: {
      businessTimezone: timeZone(str("BUSINESS_TIMEZONE"), problems),
      duplicateWindowDays: int("DUPLICATE_WINDOW_DAYS", 30, 1, 365),
      duplicateMatch: duplicateMatch(str("DUPLICATE_MATCH"), problems),
    },
    money: {
      currency: currencyCode(str("LEDGER_CURRENCY"), problems),
      settlementIntervalMs: int("SETTLEMENT_INTERVAL_SECONDS", 60, 1, 86_400) * 1000,
      returnsIntervalMs: int("RETURNS_INTERVAL_SECONDS", 60, 1, 86_400) * 1000,
      enabled: bool("LEDGER_ENABLED", true),
    },
    forms: {
      brokerName: str("BROKER_NAME") ?? "the broker",
      limitPerIpPerHour: int("FORM_LIMIT_PER_IP_PER_HOUR", 10, 1, 100_000),
      turnstile: turnstile(str("TURNSTILE_SECRET"), str("TURNSTILE_SITE_KEY"), str("TURNSTILE_VERIFY_URL"), problems),
    },
    webhooks: {
      concurrency: webhookConcurrency,
      perEndpoint: int("WEBHOOK_CONCURRENCY_PER_ENDPOINT", 4, 1, 256),
      // At least 1: 0 would leave test deliveries pending for ever (and the worker polling for them).
      testConcurrency: int("WEBHOOK_TEST_CONCURRENCY", Math.max(1, Math.floor(webhookConcurrency / 4)), 1, 256),
      timeoutMs: int("WEBHOOK_TIMEOUT_MS", 10_000, 100, 60_000),
      retryScheduleMs: retrySchedule(str("WEBHOOK_RETRY_SCHEDULE"), problems),
      allowPrivateTargets: development,
      allowedPorts: ports(str("WEBHOOK_ALLOWED_PORTS"), problems),
    },
  };
  if (config.eventRetentionDays < config.deliveryRetentionDays) {
    problems.push(
      `EVENT_RETENTION_DAYS (${config.eventRetentionDays}) must be at least DELIVERY_RETENTION_DAYS (${config.deliveryRetentionDays}): a delivery goes with its event`,
    );
  }
  if (webConcurrency > 1 && config.databaseUrl === undefined) {
    problems.push(
      `WEB_CONCURRENCY=${webConcurrency} needs DATABASE_URL: the embedded database (DATA_DIR) belongs to one process`,
    );
  }
  if (webConcurrency > 1 && config.redisUrl === undefined) {
    problems.push(
      `WEB_CONCURRENCY=${webConcurrency} needs REDIS_URL: every worker must count against the same rate limits`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** TRUST_PROXY: unset/false, a hop count (1 = the one load balancer in front), or addresses/CIDRs. */
function trustProxy(raw: string | undefined, problems: string[]): false | number | readonly string[] {
  if (raw === undefined || raw.toLowerCase() === "false") return false;
  if (/^[0-9]{1,2}$/.test(raw)) return Number(raw);
  const entries = raw.split(",").map((e) => e.trim());
  const bad = entries.filter((e) => !isAddressOrCidr(e));
  if (bad.length > 0) {
    problems.push(`TRUST_PROXY must be false, a hop count, or addresses/CIDRs (not ${bad.join(", ")})`);
    return false;
  }
  return Object.freeze(entries);
}

function isAddressOrCidr(entry: string): boolean {
  if (["loopback", "linklocal", "uniquelocal"].includes(entry)) return true;
  const [address, bits, ...rest] = entry.split("/");
  if (rest.length > 0 || address === undefined || isIP(address) === 0) return false;
  return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (isIP(address) === 4 ? 32 : 128));
}

/**
 * The default wait before each retry (Standard Webhooks' example schedule, extended so attempts
 * go on for more than three days): 5 s, 5 min, 30 min, 2 h, 5 h, then every 10 h; 13 attempts
 * over about 77.6 hours.
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18_000, ...Array(7).fill(36_000)] as const;

/** WEBHOOK_RETRY_SCHEDULE: comma-separated seconds (decimals allowed), e.g. "5,300,1800". */
function retrySchedule(raw: string | undefined, problems: string[]): readonly number[] {
  const seconds = raw === undefined ? DEFAULT_RETRY_SCHEDULE_SECONDS : raw.split(",").map((s) => Number(s.trim()));
  if (seconds.length === 0 || seconds.length > 50 || seconds.some((s) => !Number.isFinite(s) || s < 0 || s > 604_800)) {
    problems.push("WEBHOOK_RETRY_SCHEDULE must be 1 to 50 comma-separated waits in seconds, each 0 to 604800");
    return DEFAULT_RETRY_SCHEDULE_SECONDS.map((s) => s * 1000);
  }
  return Object.freeze(seconds.map((s) => Math.round(s * 1000)));
}

/** The default WEBHOOK_ALLOWED_PORTS. */
export const DEFAULT_WEBHOOK_PORTS: readonly number[] = [443, 80];

/** WEBHOOK_ALLOWED_PORTS: comma-separated TCP ports (default 443,80). */
function ports(raw: string | undefined, problems: string[]): readonly number[] {
  if (raw === undefined) return DEFAULT_WEBHOOK_PORTS;
  const list = raw.split(",").map((p) => p.trim());
  if (list.some((p) => !/^[0-9]{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535)) {
    problems.push("WEBHOOK_ALLOWED_PORTS must be comma-separated ports from 1 to 65535, e.g. 443,8443");
    return DEFAULT_WEBHOOK_PORTS;
  }
  return Object.freeze(list.map(Number));
}

/** PUBLIC_BASE_URL: an http(s) origin, no path, query or credentials. */
function origin(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  try {
    const u = new URL(raw);
    const plain = u.username === "" && u.password === "" && u.search === "" && u.hash === "";
    if (!["http:", "https:"].includes(u.protocol) || !plain || (u.pathname !== "/" && u.pathname !== "")) {
      throw new Error("not an origin");
    }
    return u.origin;
  } catch {
    problems.push("PUBLIC_BASE_URL must be an http(s) origin such as https://api.example.com (no path)");
    return undefined;
  }
}

export const DUPLICATE_FIELDS = ["phone", "email"] as const;
export type DuplicateField = (typeof DUPLICATE_FIELDS)[number];

function timeZone(raw: string | undefined, problems: string[]): string {
  if (raw === undefined) return DEFAULT_BUSINESS_TIMEZONE;
  if (isKnownTimeZone(raw)) return raw;
  problems.push(`BUSINESS_TIMEZONE must be an IANA time zone such as America/New_York (got "${raw}")`);
  return DEFAULT_BUSINESS_TIMEZONE;
}

/** LEDGER_CURRENCY: an ISO 4217 code Intl knows of a currency with two decimals (USD, EUR, CAD, …): amounts are cents. */
function currencyCode(raw: string | undefined, problems: string[]): string {
  if (raw === undefined) return "USD";
  const code = raw.toUpperCase();
  const cents = (c: string) =>
    new Intl.NumberFormat("en", { style: "currency", currency: c }).resolvedOptions().maximumFractionDigits === 2;
  if (/^[A-Z]{3}$/.test(code) && Intl.supportedValuesOf("currency").includes(code) && cents(code)) return code;
  problems.push(`LEDGER_CURRENCY must be an ISO 4217 code of a currency with cents, such as USD (got "${raw}")`);
  return "USD";
}

function duplicateMatch(raw: string | undefined, problems: string[]): readonly DuplicateField[] {
  if (raw === undefined) return DUPLICATE_FIELDS;
  const fields = raw.split(",").map((s) => s.trim().toLowerCase());
  const bad = fields.filter((f) => !(DUPLICATE_FIELDS as readonly string[]).includes(f));
  if (bad.length > 0 || fields.length === 0 || new Set(fields).size !== fields.length) {
    problems.push(`DUPLICATE_MATCH must be phone, email or phone,email (got "${raw}")`);
    return DUPLICATE_FIELDS;
  }
  return DUPLICATE_FIELDS.filter((f) => fields.includes(f));
}

/** SMTP_URL: an smtp:// or smtps:// URL (its password is never echoed in the problem). */
function smtpUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  try {
    const u = new URL(raw);
    if (!["smtp:", "smtps:"].includes(u.protocol) || u.hostname === "") throw new Error("not smtp");
    return raw;
  } catch {
    problems.push("SMTP_URL must be an smtp:// or smtps:// URL such as smtps://user:password@mail.example.com:465");
    return undefined;
  }
}

const TURNSTILE_VERIFY_URL = "https://challenges.cloudflare.com/turnstile/v0/siteverify";

function turnstile(
  secret: string | undefined,
  siteKey: string | undefined,
  verifyUrl: string | undefined,
  problems: string[],
): Config["forms"]["turnstile"] {
  if (secret === undefined) {
    if (siteKey !== undefined || verifyUrl !== undefined) {
      problems.push("TURNSTILE_SITE_KEY and TURNSTILE_VERIFY_URL need TURNSTILE_SECRET");
    }
    return undefined;
  }
  if (siteKey === undefined)
    problems.push("TURNSTILE_SECRET needs TURNSTILE_SITE_KEY (the form shows the widget with it)");
  const url = verifyUrl ?? TURNSTILE_VERIFY_URL;
  if (!/^https?:\/\/[^\s]+$/.test(url)) problems.push(`TURNSTILE_VERIFY_URL must be an http(s) URL, not ${url}`);
  return { secret, siteKey, verifyUrl: url };
}
