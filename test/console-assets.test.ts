/**
 * The consoles' files over HTTP (the real service on port 0): brotli to a browser that accepts
 * it, else gzip, else as built; always `Vary: Accept-Encoding`; hashed assets cached for a year
 * and immutable; the body decompresses to the built file byte for byte.
 */
import { readdirSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_DIR, PORTAL_DIR } from "../src/rest/console.ts";
import { chooseEncoding } from "../src/rest/static-compressed.ts";
import { startTestApp, type TestApp } from "./helpers/app.ts";

/** A GET with exactly these headers (fetch would add its own Accept-Encoding and decode). */
function get(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on("error", reject);
      req.end();
    },
  );
}

describe("the consoles' assets over HTTP", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" });
  });
  afterAll(() => t?.stop());

  for (const [prefix, dir] of [
    ["/admin", CONSOLE_DIR],
    ["/portal", PORTAL_DIR],
  ] as const) {
    it(`sends ${prefix}'s script as br, gzip or plain per Accept-Encoding, with Vary and immutable caching`, async () => {
      const script = readdirSync(join(dir, "assets")).find((f) => f.endsWith(".js"));
      expect(script).toBeDefined();
      const url = `${t.url}${prefix}/assets/${script}`;
      const built = readFileSync(join(dir, "assets", String(script)));
      const br = await get(url, { "accept-encoding": "gzip, deflate, br" });
      expect(br.status).toBe(200);
      expect(br.headers["content-encoding"]).toBe("br");
      expect(br.headers.vary).toMatch(/Accept-Encoding/i);
      expect(br.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect(br.headers["content-type"]).toMatch(/javascript/);
      expect(Number(br.headers["content-length"])).toBe(br.body.length);
      expect(brotliDecompressSync(br.body).equals(built)).toBe(true);
      const gz = await get(url, { "accept-encoding": "gzip" });
      expect(gz.headers["content-encoding"]).toBe("gzip");
      expect(gz.headers.vary).toMatch(/Accept-Encoding/i);
      expect(gunzipSync(gz.body).equals(built)).toBe(true);
      const plain = await get(url, {});
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
      expect(plain.body.equals(built)).toBe(true);
      const refused = await get(url, { "accept-encoding": "br;q=0, gzip" });
      expect(refused.headers["content-encoding"]).toBe("gzip");
    });

    it(`sends ${prefix}'s index.html compressed, never cached, for a deep link too`, async () => {
      const page = await get(`${t.url}${prefix}/some/deep/link`, { "accept-encoding": "br" });
      expect(page.status).toBe(200);
      expect(page.headers["content-encoding"]).toBe("br");
      expect(page.headers["cache-control"]).toBe("no-store");
      expect(page.headers.vary).toMatch(/Accept-Encoding/i);
      expect(brotliDecompressSync(page.body).toString()).toContain('role="status"');
    });
  }

  it("answers a missing asset 404 and never serves a file outside the build", async () => {
    expect((await get(`${t.url}/admin/assets/nope.js`, { "accept-encoding": "br" })).status).toBe(404);
    const outside = await get(`${t.url}/admin/assets/..%2f..%2fpackage.json`, {});
    expect(outside.status).toBe(404);
  });

  it("chooses br over gzip, honours q=0 and a wildcard", () => {
    expect(chooseEncoding("gzip, br")).toBe("br");
    expect(chooseEncoding("gzip")).toBe("gzip");
    expect(chooseEncoding("br;q=0, gzip;q=0.5")).toBe("gzip");
    expect(chooseEncoding("*")).toBe("br");
    expect(chooseEncoding("identity")).toBe("identity");
    expect(chooseEncoding(undefined)).toBe("identity");
  });
});
