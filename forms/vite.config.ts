/**
 * The drop-in form's build: `vite build --config forms/vite.config.ts` writes
 * forms/dist/quote-form.js, one classic script (IIFE: a page loads it with a plain
 * `<script src … defer>`) holding the element and the altcha widget, which the service serves
 * at /forms/v1/quote-form.js (src/rest/form-script.ts).
 */
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  logLevel: "warn",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    minify: true,
    lib: {
      entry: "src/quote-form.ts",
      formats: ["iife"],
      name: "LeadQuoteForm",
      fileName: () => "quote-form.js",
    },
  },
});
