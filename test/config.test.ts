import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";

const run = promisify(execFile);

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("configuration", () => {
  it("defaults to port 8080 on the embedded database in ./.data", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8080, databaseUrl: undefined, dataDir: "./.data", production: false });
    expect(config.rateLimit).toMatchObject({ defaultPerMinute: 60, defaultPerDay: 2000 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("lists every bad variable at once", () => {
    expect(
      problems({ PORT: "http", DATABASE_URL: "mysql://x", LOG_LEVEL: "loud", REDIS_URL: "nope", JWT_SECRET: "short" }),
    ).toEqual([
      "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent",
      "JWT_SECRET must be at least 32 characters",
      'PORT must be an integer from 0 to 65535 (got "http")',
      "DATABASE_URL must be a postgres: or postgresql: URL",
      "REDIS_URL must be a redis: or rediss: URL",
    ]);
  });

  it("keeps events at least as long as deliveries, each at least a week", () => {
    expect(loadConfig({}).eventRetentionDays).toBe(180);
    expect(loadConfig({}).deliveryRetentionDays).toBe(90);
    expect(problems({ EVENT_RETENTION_DAYS: "30", DELIVERY_RETENTION_DAYS: "60" })).toEqual([
      "EVENT_RETENTION_DAYS (30) must be at least DELIVERY_RETENTION_DAYS (60): a delivery goes with its event",
    ]);
    expect(problems({ DELIVERY_RETENTION_DAYS: "3" })).toEqual([
      'DELIVERY_RETENTION_DAYS must be an integer from 7 to 36500 (got "3")',
    ]);
  });

  it("reads the trusted proxies and the public base URL, and names what is wrong with them", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "1" }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: "10.0.0.0/8, loopback,::1" }).trustProxy).toEqual([
      "10.0.0.0/8",
      "loopback",
      "::1",
    ]);
    expect(loadConfig({ PUBLIC_BASE_URL: "https://api.example.com/" }).publicBaseUrl).toBe("https://api.example.com");
    expect(problems({ TRUST_PROXY: "10.0.0.0/33,everyone", PUBLIC_BASE_URL: "https://api.example.com/v1" })).toEqual([
      "TRUST_PROXY must be false, a hop count, or addresses/CIDRs (not 10.0.0.0/33, everyone)",
      "PUBLIC_BASE_URL must be an http(s) origin such as https://api.example.com (no path)",
    ]);
  });

  it("reads the webhook settings: a schedule of more than three days by default, private targets only in development and test", () => {
    const { webhooks } = loadConfig({});
    expect(webhooks).toMatchObject({ concurrency: 16, timeoutMs: 10_000, allowPrivateTargets: true });
    expect(webhooks.retryScheduleMs.slice(0, 5)).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000]);
    expect(webhooks.retryScheduleMs.reduce((a, b) => a + b, 0)).toBeGreaterThan(3 * 86_400_000);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "0.05, 1,2" }).webhooks.retryScheduleMs).toEqual([50, 1000, 2000]);
    expect(loadConfig({ NODE_ENV: "test" }).webhooks.allowPrivateTargets).toBe(true);
    const secrets = {
      JWT_SECRET: "s".repeat(40),
      API_KEY_SECRET: "s".repeat(40),
      PUBLIC_BASE_URL: "https://api.example.com",
    };
    expect(loadConfig({ NODE_ENV: "staging", ...secrets }).webhooks.allowPrivateTargets).toBe(false);
    expect(problems({ WEBHOOK_RETRY_SCHEDULE: "5,soon", WEBHOOK_CONCURRENCY: "-1", WEBHOOK_TIMEOUT_MS: "5" })).toEqual([
      'WEBHOOK_CONCURRENCY must be an integer from 0 to 256 (got "-1")',
      'WEBHOOK_TIMEOUT_MS must be an integer from 100 to 60000 (got "5")',
      "WEBHOOK_RETRY_SCHEDULE must be 1 to 50 comma-separated waits in seconds, each 0 to 604800",
    ]);
  });

  it("refuses to run in production on development secrets or without PUBLIC_BASE_URL", () => {
    expect(problems({ NODE_ENV: "production" })).toEqual([
      "JWT_SECRET or JWT_JWKS_URL is required unless NODE_ENV is development or test (NODE_ENV=production)",
      "API_KEY_SECRET is required unless NODE_ENV is development or test (NODE_ENV=production)",
      "PUBLIC_BASE_URL is required unless NODE_ENV is development or test (NODE_ENV=production)",
    ]);
    const secret = "s".repeat(40);
    expect(problems({ NODE_ENV: "production", JWT_SECRET: secret, API_KEY_SECRET: secret })).toEqual([
      "PUBLIC_BASE_URL is required unless NODE_ENV is development or test (NODE_ENV=production)",
    ]);
    expect(problems({ NODE_ENV: "staging", JWT_SECRET: secret, API_KEY_SECRET: secret, PUBLIC_BASE_URL: " " })).toEqual(
      ["PUBLIC_BASE_URL is required unless NODE_ENV is development or test (NODE_ENV=staging)"],
    );
    const production = { NODE_ENV: "production", JWT_SECRET: secret, API_KEY_SECRET: secret };
    expect(problems({ ...production, PUBLIC_BASE_URL: "https://api.example.com" })).toEqual([]);
    // Development and test may go without it (links relative, the portal on the request's own host).
    expect(loadConfig({ NODE_ENV: "test" }).publicBaseUrl).toBeUndefined();
  });

  it("refuses to start in production without PUBLIC_BASE_URL, listed with the other problems (78)", async () => {
    const secret = "s".repeat(40);
    const env = { PATH: process.env.PATH, NODE_ENV: "production", JWT_SECRET: secret, API_KEY_SECRET: secret };
    const err = (await run(process.execPath, ["src/main.ts"], {
      env: { ...env, DATA_DIR: "memory://", PORT: "0", LOG_LEVEL: "silent" },
      timeout: 60_000,
    }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(err.code).toBe(78);
    expect(err.stderr).toContain("invalid configuration");
    expect(err.stderr).toContain(
      "PUBLIC_BASE_URL is required unless NODE_ENV is development or test (NODE_ENV=production)",
    );
  });

  it("exits with a clear message when started with bad configuration", async () => {
    const err = (await run(process.execPath, ["src/main.ts"], {
      env: { PATH: process.env.PATH, NODE_ENV: "production", PORT: "-1" },
    }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(err.code).toBe(78);
    expect(err.stderr).toContain("invalid configuration");
    expect(err.stderr).toContain("PORT must be an integer");
    expect(err.stderr).toContain(
      "API_KEY_SECRET is required unless NODE_ENV is development or test (NODE_ENV=production)",
    );
    expect(err.stderr).toContain(
      "PUBLIC_BASE_URL is required unless NODE_ENV is development or test (NODE_ENV=production)",
    );
  }, 150_000);

  it("make token's script prints only an admin JWT, or another position when asked", async () => {
    const admin = (await run(process.execPath, ["scripts/token.ts"], { env: { PATH: process.env.PATH } })).stdout;
    expect(admin.trim().split(".")).toHaveLength(3);
    const claims = decodeJwt(admin.trim());
    expect(claims).toMatchObject({ position: "ADMIN", sub: "dev-admin" });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
    const agent = (
      await run(process.execPath, ["scripts/token.ts", "--position", "AGENT"], { env: { PATH: process.env.PATH } })
    ).stdout;
    expect(decodeJwt(agent.trim()).position).toBe("AGENT");
  }, 270_000);
});
