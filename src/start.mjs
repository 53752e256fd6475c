/**
 * The production entry (package.json `start`): turns Node's compile cache on, then starts the
 * service (main.ts). The cache keeps each module's compiled code and, for TypeScript, its source
 * with the types stripped, so a start with a warm cache never loads Node's type stripper (a
 * WebAssembly compiler): 24 MiB less resident memory per process (docs/decisions/0026-memory.md). The cache lives in
 * NODE_COMPILE_CACHE, else in the checkout's .cache/node-compile (not a shared temporary
 * directory another user could fill first); `make install` warms it; each entry is checked
 * against its source's hash, so a changed file is compiled again; a cache that cannot be written
 * is skipped, never an error.
 */
import { enableCompileCache } from "node:module";
import { join } from "node:path";

enableCompileCache(process.env.NODE_COMPILE_CACHE ?? join(import.meta.dirname, "..", ".cache", "node-compile"));
await import("./main.ts");
