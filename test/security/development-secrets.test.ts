/**
 * The development secrets (src/dev-secrets.ts, DEV_JWT_SECRET) sign nothing outside development:
 * every NODE_ENV but development and test needs real secrets (compared case-insensitively, so
 * "Production" and "staging" are refused too), no shipped asset of the back office holds one, and
 * the development token is handed out only by a service in development.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, DEV_JWT_SECRET, loadConfig } from "../../src/config.ts";
import { DEV_API_KEY_SECRET } from "../../src/dev-secrets.ts";
import { CONSOLE_DIR } from "../../src/rest/console.ts";
import { startTestApp } from "../helpers/app.ts";
import { PRODUCTION, runToExit } from "../helpers/processes.ts";

const PG = { name: "pglite" } as const;
const P = "/api/v1/lead_providers/";

describe("development secrets only in development", () => {
  it("refuses every NODE_ENV but development and test without real secrets, compared case-insensitively", async () => {
    for (const nodeEnv of ["staging", "Production", "PRODUCTION", "prod", "qa"]) {
      let problems: readonly string[] = [];
      try {
        loadConfig({ NODE_ENV: nodeEnv });
      } catch (err) {
        problems = err instanceof ConfigError ? err.problems : [];
      }
      expect(problems.join("\n"), nodeEnv).toMatch(/JWT_SECRET or JWT_JWKS_URL is required/);
      expect(problems.join("\n"), nodeEnv).toMatch(/API_KEY_SECRET is required/);
    }
    for (const nodeEnv of [undefined, "development", "Development", "test", "TEST"]) {
      expect(loadConfig(nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv }).jwt.usingDevSecret, nodeEnv).toBe(true);
    }
    // Production's rules follow too: "Production" is https-only with public targets.
    expect(loadConfig({ ...PRODUCTION, NODE_ENV: "Production" }).production).toBe(true);
    expect(loadConfig({ ...PRODUCTION, NODE_ENV: "staging" }).webhooks.allowPrivateTargets).toBe(false);
  });

  it("exits 78 with NODE_ENV=staging and no secrets", async () => {
    const { code, output } = await runToExit({ NODE_ENV: "staging", DATA_DIR: "memory://", PORT: "0" });
    expect(code).toBe(78);
    expect(output).toContain("NODE_ENV=staging");
  }, 150_000);

  it("ships no development secret in the console bundle", () => {
    const files = readdirSync(join(CONSOLE_DIR, "assets")).map((f) => join(CONSOLE_DIR, "assets", f));
    expect(files.length).toBeGreaterThan(0);
    for (const file of [join(CONSOLE_DIR, "index.html"), ...files]) {
      const text = readFileSync(file, "utf8");
      expect(text.includes(DEV_JWT_SECRET), file).toBe(false);
      expect(text.includes(DEV_API_KEY_SECRET), file).toBe(false);
    }
  });

  it("hands out a development token only in development, and it signs the console in", async () => {
    const dev = await startTestApp(PG);
    const prod = await startTestApp(PG, { ...PRODUCTION, JWT_SECRET: DEV_JWT_SECRET });
    try {
      const res = await dev.call("GET", "/admin/dev-token");
      expect(res.status).toBe(200);
      const { token } = (await res.json()) as { token: string };
      expect((await dev.call("GET", P, { auth: token })).status).toBe(200);
      // Even a production service that (wrongly) runs on the development JWT secret gives none.
      expect((await prod.call("GET", "/admin/dev-token")).status).toBe(404);
    } finally {
      await dev.stop();
      await prod.stop();
    }
  }, 270_000);
});
