/**
 * The addresses a person opens, in one table: `make run`'s ready banner (main.ts) and the landing
 * page at `/` (rest/landing.ts) both read it, so they cannot disagree.
 */
export interface EntryPoint {
  readonly key: string;
  readonly label: string;
  readonly path: string;
  readonly description: string;
}

export const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    key: "api",
    label: "API",
    path: "/api/v1/",
    description: "REST base (Connect, gRPC and gRPC-Web on the same port)",
  },
  { key: "admin", label: "Back office", path: "/admin/", description: "the administrators' console" },
  { key: "portal", label: "Provider portal", path: "/portal/", description: "for providers' own people (invited)" },
  { key: "docs", label: "API reference", path: "/docs", description: "interactive reference with Try it" },
  { key: "openapi", label: "OpenAPI", path: "/openapi.yaml", description: "the REST contract" },
];

/** The host part a person can open: a wildcard bind address becomes localhost. */
export function displayHost(bindHost: string): string {
  if (bindHost === "0.0.0.0" || bindHost === "::" || bindHost === "") return "localhost";
  return bindHost.includes(":") ? `[${bindHost}]` : bindHost;
}

/** The one banner printed when the service is ready, with the actual port. */
export function readyBanner(bindHost: string, port: number): string {
  const base = `http://${displayHost(bindHost)}:${port}`;
  const width = Math.max(...ENTRY_POINTS.map((e) => e.label.length));
  const lines = ENTRY_POINTS.map((e) => `  ${e.label.padEnd(width)}  ${base}${e.path}`);
  return `\nLead Provider API is ready on port ${port}\n${lines.join("\n")}\n\n`;
}
