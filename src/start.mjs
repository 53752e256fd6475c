/**
 * The production entry (package.json `start`): turns Node's compile cache on, then starts the
 * service (main.ts). The cache keeps each module's compiled code and, for TypeScript, its source
 * with the types stripped, so a start with a warm cache never loads Node's type stripper (a
 * WebAssembly compiler): 24 MiB less resident memory per process (issue 25). The cache lives in
 * NODE_COMPILE_CACHE, else in the system's temporary directory; `make install` warms it, and a
 * cache that cannot be written is skipped, never an error.
 */
import { enableCompileCache } from "node:module";

enableCompileCache();
await import("./main.ts");
