/** The layering rules of docs/architecture.md, checked on the source so a break fails the build. */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = new URL("../src/", import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const imports = (file: string) =>
  [...readFileSync(file, "utf8").matchAll(/^import[^"]*"([^"]+)"/gm)].map((m) => m[1] ?? "");

/** Domain code: everything in feature folders except their edges (*.rest.ts, *.rpc.ts, outgoing *.http.ts). */
const EDGE_FOLDERS = new Set(["rest", "rpc", "edge", "db"]);
const domain = files(SRC).filter((f) => {
  const [folder, name] = relative(SRC, f).split("/");
  return name !== undefined && !EDGE_FOLDERS.has(folder ?? "") && !/\.(rest|rpc|http)\.ts$/.test(name);
});

describe("layers", () => {
  it("finds the feature folders' services and repositories", () => {
    const names = domain.map((f) => relative(SRC, f));
    expect(names).toContain("leads/lead.service.ts");
    expect(names).toContain("api-keys/api-key.repository.ts");
    expect(names).toContain("states/state.repository.ts");
    expect(names).toContain("webhooks/webhook.worker.ts");
    expect(names).not.toContain("webhooks/webhook.http.ts");
  });

  it.each(domain.map((f) => [relative(SRC, f), f]))("%s imports no HTTP, Connect or generated code", (_name, file) => {
    const bad = imports(file).filter((i) =>
      /^(express|node:http2?|@connectrpc\/|express-openapi-validator)$|^@connectrpc\/|generated\//.test(i),
    );
    expect(bad).toEqual([]);
  });

  it("keeps HTTP out of the domain error type", () => {
    const text = readFileSync(join(SRC, "errors.ts"), "utf8");
    expect(text).not.toMatch(/\b(HTTP_STATUS|WWW-Authenticate|Retry-After|status: 4\d\d)\b/);
  });

  it("never lets the REST and RPC edges import each other", () => {
    for (const [from, other] of [
      ["rest", "/rpc/"],
      ["rpc", "/rest/"],
    ] as const) {
      for (const f of files(join(SRC, from))) expect(imports(f).filter((i) => i.includes(`..${other}`))).toEqual([]);
    }
  });
});
