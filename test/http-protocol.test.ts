/**
 * HTTP/1.1 requests the edge refuses before any route reads them, on the real service over raw
 * sockets where fetch would not send them: a body that is not what its Content-Encoding says
 * (400 invalid_content_encoding, nothing logged as an error), a repeated Authorization or Host
 * (400 duplicate_header), and a request Node's parser refuses (400 with an X-Request-Id).
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { rawHttp } from "./helpers/raw-http.ts";

const PG = { name: "pglite" } as const;
const P = "/api/v1/lead_providers/";
const LEADS = "/api/v1/public/leads/";

describe("requests the HTTP edge refuses", () => {
  let t: TestApp;
  let admin: string;
  let key: string;
  const logs: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    t = await startTestApp(PG, {}, { logger: createLogger("info", sink) });
    admin = await t.token();
    ({ key } = await t.provider());
  });
  afterAll(() => t.stop());

  it("answers 400 invalid_content_encoding for a body that is not what Content-Encoding says", async () => {
    for (const encoding of ["gzip", "deflate", "br", "zstd"]) {
      for (const [path, auth] of [
        [LEADS, key],
        [`${P}create/`, admin],
        ["/nowhere", undefined],
      ] as const) {
        const res = await t.call("POST", path, {
          body: JSON.stringify(leadBody()),
          auth,
          headers: { "content-encoding": encoding },
        });
        const label = `${encoding} ${path}`;
        expect(res.status, label).toBe(400);
        expect(((await res.json()) as Json).code, label).toBe("invalid_content_encoding");
      }
    }
    const errors = logs.filter((l) => /"level":"(error|fatal|warn)"/.test(l));
    expect(errors).toEqual([]);
  });

  it("gives the HTTP parser's own refusals an X-Request-Id", async () => {
    const answer = await rawHttp(t.port, "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
  });

  it("refuses a request with two Authorization headers or two Host headers", async () => {
    for (const [label, headers] of [
      ["authorization", `Authorization: Bearer ${key}\r\nAuthorization: Bearer lp_live_other\r\nHost: x\r\n`],
      ["host", `Authorization: Bearer ${key}\r\nHost: a.example\r\nHost: b.example\r\n`],
    ] as const) {
      const answer = await rawHttp(t.port, `GET ${LEADS}x/ HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);
      expect(answer, label).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer, label).toContain("duplicate_header");
    }
  });
});
