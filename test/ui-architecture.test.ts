/**
 * The UI kit's rule (docs/architecture.md): the back office (admin/) and the provider portal
 * (portal/) share code only through the kit in ui/. No file of one app names a file of the other
 * (an import, a CSS @import, a tsconfig or Vite path), no file of the kit names either app, and
 * neither app's tsconfig takes in the other's files. The drop-in form (forms/) is a bundle of its
 * own that pages on other sites load: it names none of them, and none of them names it (the
 * portal's preview loads it by its URL), so nothing of React or MUI can slip into it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../", import.meta.url).pathname;
type Area = "admin" | "portal" | "ui" | "forms";
/** What each folder may not name. */
const FORBIDDEN: Record<Area, Area[]> = {
  admin: ["portal", "forms"],
  portal: ["admin", "forms"],
  ui: ["admin", "portal", "forms"],
  forms: ["admin", "portal", "ui"],
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === "dist" || e.name === "node_modules"
        ? []
        : files(join(dir, e.name))
      : /\.(tsx?|css|html|json)$/.test(e.name)
        ? [join(dir, e.name)]
        : [],
  );
}

/** The folder (admin, portal, ui) a path lies in, if one of them. */
function areaOf(path: string): Area | undefined {
  const top = relative(ROOT, path).split(sep)[0];
  return top === "admin" || top === "portal" || top === "ui" || top === "forms" ? top : undefined;
}

/** Every relative path a file names in quotes or url(…): imports, CSS @import, tsconfig and Vite paths. */
const RELATIVE = /["'`(](\.{1,2}\/[^"'`)\s]*)/g;

/** The references from `file` (its text given) into a folder it may not name, as "from → to". */
function foreignReferences(file: string, text: string): string[] {
  const from = areaOf(file);
  if (from === undefined) return [];
  return [...text.matchAll(RELATIVE)].flatMap((m) => {
    const target = resolve(dirname(file), m[1] ?? "");
    const to = areaOf(target);
    return to !== undefined && FORBIDDEN[from].includes(to)
      ? [`${relative(ROOT, file)} → ${relative(ROOT, target)}`]
      : [];
  });
}

/** The files a tsconfig of `app` (its JSON given; `extends` followed) takes in from a folder the app may not name. */
function foreignTsconfigFiles(app: Area, config: unknown): string[] {
  const dir = join(ROOT, app);
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, dir, undefined, join(dir, "tsconfig.json"));
  expect(parsed.errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, "\n"))).toEqual([]);
  expect(parsed.fileNames.length).toBeGreaterThan(0);
  return parsed.fileNames.filter((f) => FORBIDDEN[app].includes(areaOf(f) ?? app)).map((f) => relative(ROOT, f));
}

const tsconfigOf = (app: string): unknown =>
  ts.readConfigFile(join(ROOT, app, "tsconfig.json"), ts.sys.readFile).config;

describe("the UI kit's boundaries", () => {
  const all = (["admin", "portal", "ui", "forms"] as const).flatMap((area) => files(join(ROOT, area)));

  it("reads both apps and the kit, and sees both apps import the kit", () => {
    for (const area of ["admin/src/", "portal/src/", "ui/src/", "forms/src/"]) {
      expect(all.some((f) => relative(ROOT, f).startsWith(area))).toBe(true);
    }
    for (const app of ["admin", "portal"]) {
      const main = readFileSync(join(ROOT, app, "src/main.tsx"), "utf8");
      expect(main).toContain('from "../../ui/src/');
    }
  });

  it("finds no file of one app naming the other, and no file of the kit naming either", () => {
    expect(all.flatMap((f) => foreignReferences(f, readFileSync(f, "utf8")))).toEqual([]);
  });

  it.each(["admin", "portal", "ui", "forms"] as const)(
    "%s/tsconfig.json takes in no file of a folder it may not name",
    (app) => {
      expect(foreignTsconfigFiles(app, tsconfigOf(app))).toEqual([]);
    },
  );

  it("catches a planted violation of each kind", () => {
    const planted = (path: string, text: string) => foreignReferences(join(ROOT, path), text);
    expect(planted("portal/src/Home.tsx", 'import { when } from "../../admin/src/common.tsx";')).toEqual([
      "portal/src/Home.tsx → admin/src/common.tsx",
    ]);
    expect(planted("admin/src/leads.tsx", 'export { MODE_CHOICES } from "../../portal/src/leads.tsx";')).toHaveLength(
      1,
    );
    expect(planted("portal/src/main.tsx", 'import "../../admin/src/styles.css";')).toHaveLength(1);
    expect(planted("ui/src/components/AppBar.tsx", 'import { api } from "../../../admin/src/api.ts";')).toHaveLength(1);
    expect(planted("portal/vite.config.ts", 'resolve: { alias: { "@admin": "../admin/src" } }')).toHaveLength(1);
    expect(planted("portal/src/Home.tsx", 'import { when } from "../../ui/src/format.ts";')).toEqual([]);
    expect(planted("forms/src/quote-form.ts", 'import { when } from "../../ui/src/format.ts";')).toEqual([
      "forms/src/quote-form.ts → ui/src/format.ts",
    ]);

    const withAdmin = { extends: "../ui/tsconfig.json", include: ["src", "../admin/src/listActions.tsx"] };
    expect(foreignTsconfigFiles("portal", withAdmin)).toEqual(["admin/src/listActions.tsx"]);
  });
});
