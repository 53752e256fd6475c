/**
 * The interactive API reference at /docs: Scalar's standalone bundle, installed from npm and
 * served from this process (no CDN, no external fonts), reading /openapi.yaml. Beside it, the
 * client libraries' READMEs (each sdks/<name>/README.md), which the reference's introduction links.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { Router } from "express";

const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Lead Provider API reference</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="/docs/assets/standalone.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// Scalar's default light theme draws some secondary text below WCAG AA (4.5:1) on its
// backgrounds: its text colours are darkened here, and its links underlined.
const CUSTOM_CSS = `
.light-mode, .light-mode .sidebar, .light-mode .t-doc__sidebar {
  --scalar-color-1: #1a1a1a;
  --scalar-color-2: #3b3b3b;
  --scalar-color-3: #4f4f4f;
  --scalar-color-accent: #0b4ea2;
  --scalar-sidebar-color-1: #1a1a1a;
  --scalar-sidebar-color-2: #3b3b3b;
  --scalar-sidebar-color-active: #0b4ea2;
  --scalar-color-green: #0b6b2c;
  --scalar-color-red: #b3261e;
  --scalar-color-yellow: #7a4d00;
  --scalar-color-blue: #0b4ea2;
  --scalar-color-orange: #8a3b00;
  --scalar-color-purple: #5b2a9b;
}
:focus-visible { outline: 3px solid #0b4ea2 !important; outline-offset: 2px; }
`;

// "Try it" targets the page's own origin (whatever port or proxy served it), not the contract's
// example server, which the page's CSP (connect-src 'self') would block anywhere else. A region
// that scrolls inside the page is given tabindex=0 and a name, so a keyboard can reach and scroll
// it (WCAG 2.1.1; axe: scrollable-region-focusable), as Scalar draws and redraws them; list items
// outside a list (its narrow-screen menu) get their parent marked as the list.
const INIT = `Scalar.createApiReference("#app", {
  url: "/openapi.yaml",
  servers: [{ url: window.location.origin, description: "This server" }],
  withDefaultFonts: false,
  hideClientButton: false,
  telemetry: false,
  forceDarkModeState: "light",
  hideDarkModeToggle: true,
  customCss: ${JSON.stringify(CUSTOM_CSS)},
});
(function focusableScrollRegions() {
  var named = 0;
  function mark() {
    // Scalar's narrow-screen menu puts list items in a plain element: make it the list it is.
    var items = document.querySelectorAll("#app li");
    for (var j = 0; j < items.length; j++) {
      var parent = items[j].parentElement;
      if (!parent || items[j].getAttribute("role")) continue;
      var parentRole = parent.getAttribute("role");
      if (!parentRole && !/^(UL|OL|MENU)$/.test(parent.tagName)) parent.setAttribute("role", "list");
      // A list item under an element that is given another role is no list item to a reader.
      else if (parentRole && parentRole !== "list") items[j].setAttribute("role", "none");
    }
    var all = document.querySelectorAll("#app *");
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (el.hasAttribute("data-scroll-region")) continue;
      var style = getComputedStyle(el);
      var scrolls = /(auto|scroll)/.test(style.overflowY + style.overflowX);
      if (!scrolls || (el.scrollHeight <= el.clientHeight && el.scrollWidth <= el.clientWidth)) continue;
      el.setAttribute("data-scroll-region", "");
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "0");
      if (!el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby")) {
        named += 1;
        var inSidebar = el.closest("nav, aside, .sidebar, .t-doc__sidebar");
        el.setAttribute("aria-label", inSidebar ? "API reference contents" : "API reference, scrollable part " + named);
      }
      if (!el.getAttribute("role")) el.setAttribute("role", "region");
    }
  }
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    setTimeout(function () { pending = false; mark(); }, 200);
  }).observe(document.getElementById("app"), { childList: true, subtree: true });
  window.addEventListener("resize", mark);
})();
`;

/** The SDKs' READMEs, served as text at /docs/sdks/<name> (a checkout without sdks/ answers 404 there). */
const SDK_READMES = {
  typescript: new URL("../../sdks/typescript/README.md", import.meta.url),
  php: new URL("../../sdks/php/README.md", import.meta.url),
} as const;

function readmes(): Map<string, string> {
  const texts = new Map<string, string>();
  for (const [name, url] of Object.entries(SDK_READMES)) {
    try {
      texts.set(name, readFileSync(url, "utf8"));
    } catch {
      // not in this checkout
    }
  }
  return texts;
}

export function docsRoutes(): Router {
  const require = createRequire(import.meta.url);
  const sdks = readmes();
  const assets = join(dirname(require.resolve("@scalar/api-reference")), "browser");
  const router = Router();
  router.use("/docs", (_req, res, next) => {
    res.setHeader("Content-Security-Policy", DOCS_CSP);
    res.setHeader("Cache-Control", "public, max-age=300");
    next();
  });
  router.get(["/docs", "/docs/"], (_req, res) => {
    res.type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  router.use("/docs/assets", express.static(assets, { index: false }));
  router.get(["/docs/sdks/:name", "/docs/sdks/:name/"], (req, res, next) => {
    const text = sdks.get(String(req.params.name));
    if (text === undefined) return next();
    res.type("text/markdown; charset=utf-8").send(text);
  });
  return router;
}
