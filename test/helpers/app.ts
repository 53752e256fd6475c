/** Starts the real service on port 0 against a test database and offers a few conveniences. */

import { createSecretKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { SignJWT } from "jose";
import { type App, type AppOptions, createApp } from "../../src/app.ts";
import { DEV_JWT_SECRET, loadConfig } from "../../src/config.ts";
import { type Backend, createTestDatabase } from "./database.ts";
import { passedEnv } from "./env.ts";

export interface TestApp {
  readonly app: App;
  /** The Postgres database this app uses (undefined: its own in-memory PGlite). */
  readonly databaseUrl: string | undefined;
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
  /** A JWT signed with the test secret; admin unless `position` says otherwise. */
  token(claims?: Record<string, unknown>, options?: { expiresIn?: string; sub?: string }): Promise<string>;
  /** Creates a provider through the Management API and issues its key. */
  provider(name?: string, fields?: Record<string, unknown>): Promise<{ id: number; key: string }>;
  /** fetch against the app with JSON helpers. */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; auth?: string; headers?: Record<string, string> },
  ): Promise<Response>;
}

let counter = 0;

/** What a test does with a running service, in this process or another: calls, tokens, providers. */
export type ServiceClient = Pick<TestApp, "port" | "url" | "token" | "call" | "provider">;

export function serviceClient(
  port: number,
  jwt: { readonly secret: string; readonly issuer?: string | undefined; readonly audience?: string | undefined },
): ServiceClient {
  const url = `http://127.0.0.1:${port}`;
  const config = { jwt };
  const secret = createSecretKey(Buffer.from(config.jwt.secret, "utf8"));

  const token: TestApp["token"] = async (claims = {}, opts = {}) => {
    // Claims given by the test win over the defaults (e.g. an `exp` in the past, a wrong `iss`).
    const jwt = new SignJWT({ position: "ADMIN", ...claims }).setProtectedHeader({ alg: "HS256" });
    jwt.setSubject(opts.sub ?? "test-admin").setIssuedAt();
    if (!("exp" in claims)) jwt.setExpirationTime(opts.expiresIn ?? "1h");
    if (config.jwt.issuer && !("iss" in claims)) jwt.setIssuer(config.jwt.issuer);
    if (config.jwt.audience && !("aud" in claims)) jwt.setAudience(config.jwt.audience);
    return jwt.sign(secret);
  };

  const call: TestApp["call"] = (method, path, opts = {}) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        ...(opts.body !== undefined && { "content-type": "application/json" }),
        ...(opts.auth && { authorization: `Bearer ${opts.auth}` }),
        ...opts.headers,
      },
      ...(opts.body !== undefined && { body: typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) }),
    });

  const provider: TestApp["provider"] = async (name, fields = {}) => {
    const admin = await token();
    counter += 1;
    const created = await call("POST", "/api/v1/lead_providers/create/", {
      auth: admin,
      body: { name: name ?? `Provider ${process.pid}-${counter}`, ...fields },
    });
    if (created.status !== 201) throw new Error(`create provider: ${created.status} ${await created.text()}`);
    const { id } = (await created.json()) as { id: number };
    const issued = await call("POST", `/api/v1/lead_providers/${id}/generate_api_key/`, { auth: admin });
    if (issued.status !== 201) throw new Error(`generate key: ${issued.status} ${await issued.text()}`);
    const { api_key } = (await issued.json()) as { api_key: string };
    return { id, key: api_key };
  };

  return { port, url, token, call, provider };
}

let image: Blob | undefined;
/** The run's migrated PGlite image (test/global-setup.ts) for an app on in-memory PGlite. */
function withImage(databaseUrl: string | undefined, dataDir: string): AppOptions {
  const file = process.env.LP_TEST_PGLITE_IMAGE;
  if (databaseUrl || !dataDir.startsWith("memory://") || !file) return {};
  image ??= new Blob([readFileSync(file)]);
  return { databaseImage: image };
}

export async function startTestApp(
  backend: Backend,
  env: Record<string, string> = {},
  options: AppOptions = {},
): Promise<TestApp> {
  // DATABASE_URL given: a second instance on another app's database (that app drops it).
  const database = env.DATABASE_URL
    ? { url: env.DATABASE_URL, drop: async () => {} }
    : await createTestDatabase(backend);
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    VALIDATE_RESPONSES: "true",
    DATA_DIR: "memory://",
    // Tests fail authentication on purpose, often, from one address.
    AUTH_FAILURES_PER_MINUTE: "100000",
    ...(database.url && { DATABASE_URL: database.url }),
    ...passedEnv(),
    ...env,
  });
  const app = await createApp(config, { ...withImage(config.databaseUrl, config.dataDir), ...options });
  const port = await app.listen();
  const client = serviceClient(port, { ...config.jwt, secret: config.jwt.secret ?? DEV_JWT_SECRET });
  return {
    app,
    databaseUrl: database.url,
    ...client,
    async stop() {
      await app.stop();
      await database.drop();
    },
  };
}

/** The injected clock of `minuteClock()`: a function the app reads, and a way to start a fresh minute. */
export interface MinuteClock {
  (): Date;
  /**
   * Jumps forward to 5 s past the start of the next UTC minute: a rate-limit minute of its own,
   * with 55 s of real time in it whatever the test did before. Call it right before counting.
   */
  nextMinute(): void;
  /** What the service names as the seconds to this minute's end (Retry-After, RateLimit's t=) now. */
  secondsLeft(): number;
}

/**
 * A clock for tests that count requests against a per-minute limit: it reads 5 s past the start
 * of a UTC minute when made and then runs at real speed, so an app given it (`{ now }`) keeps
 * one rate-limit minute for 55 s, however close to a real minute boundary the test starts. A test
 * that counts after a slow set-up (an app start, earlier tests of the file) calls `nextMinute()`
 * first. It only ever moves forward. JWTs are checked against real time, so tokens are unaffected.
 */
export function minuteClock(): MinuteClock {
  let offset = 0;
  const toMinuteStart = () => {
    const real = Date.now();
    const shown = real + offset;
    offset = Math.floor(shown / 60_000) * 60_000 + 60_000 + 5_000 - real;
  };
  const now = () => new Date(Date.now() + offset);
  // Made: 5 s into the current minute (back by at most 55 s, before the app ever reads it).
  const made = Date.now();
  offset = Math.floor(made / 60_000) * 60_000 + 5_000 - made;
  return Object.assign(now, {
    nextMinute: toMinuteStart,
    secondsLeft: () => Math.max(1, Math.ceil((60_000 - (now().getTime() % 60_000)) / 1000)),
  });
}

/** The date `days` from today (UTC), YYYY-MM-DD: a ship date that stays valid whenever the tests run. */
export function shipDate(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/** A valid lead body; override any field. */
export function leadBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return {
    external_id: `ext-${process.pid}-${Date.now()}-${counter}`,
    first_name: "Jane",
    last_name: "Doe",
    email: "jane.doe@example.com",
    phone_number: "+1 (310) 555-0100",
    origin_zip: "90210",
    destination_zip: "10001",
    estimated_ship_date: shipDate(20),
    overseas_type: "DOMESTIC",
    ship_via: "OPEN",
    vehicles: [{ year: 2021, make: "Toyota", model: "Camry", type: "CAR", tariff: 950, deposit: 150 }],
    ...overrides,
  };
}

/** A parsed JSON response body, loosely typed for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
export type Json = Record<string, any>;
