/** The JWT verifier on its own (src/auth/jwt.ts): every rule, one at a time. Fast; `make mutation` runs it. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createJwtVerifier } from "../../src/auth/jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { DomainError } from "../../src/errors.ts";

const SECRET = "unit-test-jwt-secret-0123456789abcdef";
const key = new TextEncoder().encode(SECRET);
const now = () => Math.floor(Date.now() / 1000);
const config = (env: Record<string, string> = {}) => loadConfig({ JWT_SECRET: SECRET, ...env }).jwt;

type Edit = (j: SignJWT) => SignJWT;
const sign = (claims: Record<string, unknown> = { position: "ADMIN" }, edit: Edit = (j) => j) =>
  edit(new SignJWT(claims).setProtectedHeader({ alg: "HS256" })).sign(key);
const good: Edit = (j) => j.setSubject("alice").setIssuedAt().setExpirationTime("5m");

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).kind).toBe("unauthenticated");
  expect((err as DomainError).code).toBe("invalid_token");
  return err as DomainError;
}

describe("createJwtVerifier (HS256)", () => {
  // Made in each test, so the verifier's own code counts as covered by the test that uses it.
  let verify: ReturnType<typeof createJwtVerifier>;
  beforeEach(() => {
    verify = createJwtVerifier(config());
  });

  it("accepts a good token and reports its subject and claims", async () => {
    const p = await verify(await sign({ position: "ADMIN", scope: "x" }, good));
    expect(p).toMatchObject({ subject: "alice", isAdmin: true, canProcessLeads: true });
    expect(p.claims.scope).toBe("x");
  });

  it("says who is an admin by the configured claim and value", async () => {
    expect((await verify(await sign({ position: "AGENT" }, good))).isAdmin).toBe(false);
    expect((await verify(await sign({}, good))).isAdmin).toBe(false);
    const custom = createJwtVerifier(config({ JWT_ADMIN_CLAIM: "role", JWT_ADMIN_VALUE: "ops" }));
    expect((await custom(await sign({ role: "ops" }, good))).isAdmin).toBe(true);
    expect((await custom(await sign({ position: "ADMIN" }, good))).isAdmin).toBe(false);
  });

  it("reads the lead-processing claim as a value, a list, or a space-separated scope", async () => {
    const v = createJwtVerifier(config({ JWT_WORKFLOW_CLAIM: "scope", JWT_WORKFLOW_VALUE: "leads:process" }));
    expect((await v(await sign({ scope: "leads:process" }, good))).canProcessLeads).toBe(true);
    expect((await v(await sign({ scope: "read leads:process write" }, good))).canProcessLeads).toBe(true);
    expect((await v(await sign({ scope: ["a", "leads:process"] }, good))).canProcessLeads).toBe(true);
    expect((await v(await sign({ scope: "leads:processes" }, good))).canProcessLeads).toBe(false);
    expect((await v(await sign({ scope: ["leads"] }, good))).canProcessLeads).toBe(false);
    expect((await v(await sign({ scope: 7 }, good))).canProcessLeads).toBe(false);
    expect((await v(await sign({}, good))).canProcessLeads).toBe(false);
  });

  it("requires sub, a non-empty string", async () => {
    const noSub = await refusal(
      verify(await sign({ position: "ADMIN" }, (j) => j.setIssuedAt().setExpirationTime("5m"))),
    );
    expect(noSub.message).toBe("the token has no subject (sub)");
    await refusal(
      verify(await sign({ position: "ADMIN" }, (j) => j.setSubject("").setIssuedAt().setExpirationTime("5m"))),
    );
    await refusal(verify(await sign({ sub: 42 }, (j) => j.setIssuedAt().setExpirationTime("5m"))));
  });

  it("requires exp, and allows 30 s of clock skew on exp and nbf but no more", async () => {
    await refusal(verify(await sign({}, (j) => j.setSubject("a").setIssuedAt())));
    const exp = (ago: number) =>
      sign({}, (j) =>
        j
          .setSubject("a")
          .setIssuedAt(now() - 100)
          .setExpirationTime(now() - ago),
      );
    expect((await verify(await exp(25))).subject).toBe("a");
    await refusal(verify(await exp(35)));
    const nbf = (ahead: number) =>
      sign({}, (j) =>
        j
          .setSubject("a")
          .setIssuedAt()
          .setNotBefore(now() + ahead)
          .setExpirationTime("5m"),
      );
    expect((await verify(await nbf(25))).subject).toBe("a");
    await refusal(verify(await nbf(35)));
  });

  it("refuses an iat more than 30 s in the future", async () => {
    const iat = (ahead: number) =>
      sign({}, (j) =>
        j
          .setSubject("a")
          .setIssuedAt(now() + ahead)
          .setExpirationTime(now() + ahead + 60),
      );
    expect((await verify(await iat(20))).subject).toBe("a");
    const e = await refusal(verify(await iat(40)));
    expect(e.message).toBe("the token is issued in the future (iat)");
  });

  it("refuses a lifetime over JWT_MAX_LIFETIME_SECONDS, counted from iat, else nbf, else now", async () => {
    const v = createJwtVerifier(config({ JWT_MAX_LIFETIME_SECONDS: "600" }));
    const t = now();
    expect(
      (
        await v(
          await sign({}, (j) =>
            j
              .setSubject("a")
              .setIssuedAt(t)
              .setExpirationTime(t + 600),
          ),
        )
      ).subject,
    ).toBe("a");
    const long = await refusal(
      v(
        await sign({}, (j) =>
          j
            .setSubject("a")
            .setIssuedAt(t)
            .setExpirationTime(t + 601),
        ),
      ),
    );
    expect(long.message).toBe("the token lives longer than 600 s (exp − iat); ask for a shorter-lived token");
    // Counted from iat even when it lies in the past: 1000 s ago + 590 s to go is too long.
    await refusal(
      v(
        await sign({}, (j) =>
          j
            .setSubject("a")
            .setIssuedAt(t - 1000)
            .setExpirationTime(t + 590),
        ),
      ),
    );
    // No iat: from nbf.
    expect(
      (
        await v(
          await sign({}, (j) =>
            j
              .setSubject("a")
              .setNotBefore(t - 10)
              .setExpirationTime(t + 590),
          ),
        )
      ).subject,
    ).toBe("a");
    await refusal(
      v(
        await sign({}, (j) =>
          j
            .setSubject("a")
            .setNotBefore(t - 10)
            .setExpirationTime(t + 595),
        ),
      ),
    );
    // Neither: from now.
    expect((await v(await sign({}, (j) => j.setSubject("a").setExpirationTime(t + 590)))).subject).toBe("a");
    await refusal(v(await sign({}, (j) => j.setSubject("a").setExpirationTime(t + 700))));
  });

  it("refuses another secret, alg none, a JWKS algorithm, and tokens that are not canonical base64url", async () => {
    const other = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("a")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("another-secret-0123456789abcdefghijkl"));
    expect((await refusal(verify(other))).message).toBe("the bearer token is missing or invalid");
    const token = await sign({}, good);
    const [h, p, s] = token.split(".") as [string, string, string];
    const none = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${p}.`;
    await refusal(verify(none));
    await refusal(verify(`${h}.${p}.${s}=`)); // padding
    await refusal(verify(`${h}.${p}`)); // two segments
    await refusal(verify(`${h}.${p}.${s}.x`)); // four
    await refusal(verify(`${h}.${p}+.${s}`)); // not base64url
    await refusal(verify(`${h}.${p}.${s.slice(0, -1)}${s.endsWith("A") ? "B" : "A"}`)); // another signature
    const rs = await generateKeyPair("RS256");
    await refusal(
      verify(
        await new SignJWT({})
          .setProtectedHeader({ alg: "RS256" })
          .setSubject("a")
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(rs.privateKey),
      ),
    );
    // A stray bit in the last character: decodes to the same bytes, but is not how base64url writes them.
    const last = s.at(-1) as string;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const twin = alphabet[alphabet.indexOf(last) ^ 1] as string;
    if (Buffer.from(`${s.slice(0, -1)}${twin}`, "base64url").equals(Buffer.from(s, "base64url"))) {
      await refusal(verify(`${h}.${p}.${s.slice(0, -1)}${twin}`));
    }
  });

  it("checks iss and aud when configured", async () => {
    const v = createJwtVerifier(config({ JWT_ISSUER: "https://idp.example", JWT_AUDIENCE: "lead-provider" }));
    const withBoth: Edit = (j) => good(j).setIssuer("https://idp.example").setAudience("lead-provider");
    expect((await v(await sign({}, withBoth))).subject).toBe("alice");
    await refusal(v(await sign({}, (j) => good(j).setIssuer("https://other.example").setAudience("lead-provider"))));
    await refusal(v(await sign({}, (j) => good(j).setIssuer("https://idp.example").setAudience("someone-else"))));
    await refusal(v(await sign({}, good)));
  });
});

describe("createJwtVerifier (JWKS)", () => {
  let server: Server;
  let url: string;
  let es: Awaited<ReturnType<typeof generateKeyPair>>;
  beforeAll(async () => {
    es = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(es.publicKey)), kid: "k", alg: "ES256", use: "sig" };
    server = createServer((_req, res) =>
      res.setHeader("content-type", "application/json").end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(() => server.close());

  it("accepts the JWKS key's algorithm when allowed, and never HS256", async () => {
    const v = createJwtVerifier(loadConfig({ JWT_JWKS_URL: url }).jwt);
    const token = await new SignJWT({ position: "ADMIN" })
      .setProtectedHeader({ alg: "ES256", kid: "k" })
      .setSubject("svc")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(es.privateKey);
    expect(await v(token)).toMatchObject({ subject: "svc", isAdmin: true });
    await refusal(v(await sign({}, good)));
    const rsOnly = createJwtVerifier(loadConfig({ JWT_JWKS_URL: url, JWT_JWKS_ALGORITHMS: "RS256" }).jwt);
    await refusal(rsOnly(token));
  });
});
