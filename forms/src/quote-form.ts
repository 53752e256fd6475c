/**
 * `<lead-quote-form publishable-key="lp_pub_…">`: the drop-in quote form (docs/forms.md). A plain
 * custom element in an open shadow root, built with the altcha widget into one classic script
 * (forms/vite.config.ts) that the service serves at /forms/v1/quote-form.js. It talks only to
 * the service the script came from (or `api-base`): the form's config, the ZIP directory, a
 * proof-of-work challenge the widget solves by itself, and the lead. Everything a person or the
 * service wrote is set as text, never as markup.
 */
import "altcha";
import altchaCss from "altcha/altcha.css?inline";
import { fill, type LabelKey, type Labels, labelsOf } from "./labels.ts";
import { STYLES } from "./styles.ts";

/** The origin this script was loaded from: the service's, where the form's API lives. */
const SCRIPT_BASE = (() => {
  const src = (document.currentScript as HTMLScriptElement | null)?.src;
  try {
    return src ? new URL(src).origin : undefined;
  } catch {
    return undefined;
  }
})();

const FORMS_API = "/api/v1/forms";

/** The same shapes as the service's checks (src/fields.ts). */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;
const PHONE_CHARS = /^[0-9+().\- ]+$/;
const ZIP = /^[0-9]{5}$/;

const DEFAULT_OVERSEAS: Record<string, string[]> = {
  DOMESTIC: ["OPEN", "ENCLOSED", "DRIVE_AWAY"],
  FOREIGN: ["CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF"],
};
const SHIP_VIA_NAMES: Record<string, string> = {
  OPEN: "Open carrier",
  ENCLOSED: "Enclosed carrier",
  DRIVE_AWAY: "Driven to you (drive-away)",
  CONTAINER_20FT: "20 ft container",
  CONTAINER_40FT: "40 ft container",
  SHARED: "Shared container",
  ROLLON_ROLLOFF: "Roll-on/roll-off ship",
};
const VEHICLE_TYPES: [string, string][] = [
  ["CAR", "Car"],
  ["SUV", "SUV"],
  ["PICKUP", "Pickup"],
  ["VAN", "Van"],
  ["MINIVAN", "Minivan"],
  ["MOTORCYCLE", "Motorcycle"],
  ["ATV", "ATV"],
  ["BOAT", "Boat"],
  ["RV", "RV"],
  ["TRAILER", "Trailer"],
  ["HEAVY_EQUIPMENT", "Heavy equipment"],
  ["OTHER", "Other"],
];
const MAX_VEHICLES = 20;

interface FormConfig {
  livemode: boolean;
  broker_name: string;
  consent_text: string;
  consent_text_sha256: string;
  challenge: "altcha" | "turnstile";
  turnstile_site_key: string | null;
  overseas_types: Record<string, string[]>;
}

/** Cloudflare's Turnstile API, when the service uses it instead of ALTCHA (TURNSTILE_SECRET). */
type Turnstile = {
  render(el: HTMLElement, options: Record<string, unknown>): string;
  reset(id: string): void;
};
const TURNSTILE_SCRIPT = "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit";

interface Problem {
  code?: string;
  detail?: string;
  title?: string;
  errors?: { field: string; code: string; message: string }[];
}

interface Vehicle {
  year: string;
  make: string;
  model: string;
  type: string;
  run: boolean;
}

type Child = Node | string | null | undefined | false;

/** An element with properties and attributes; strings become text nodes, never markup. */
function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

function today(): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

type AltchaElement = HTMLElement & { reset?: () => void; verify?: () => Promise<unknown> };

class LeadQuoteForm extends HTMLElement {
  readonly #root: ShadowRoot;
  #labels: Labels = labelsOf(null, () => null);
  #config: FormConfig | undefined;
  #vehicles: Vehicle[] = [{ year: "", make: "", model: "", type: "CAR", run: true }];
  #consentAt: string | null = null;
  #payload: string | null = null;
  /** The Turnstile widget's id, when the service uses Turnstile. */
  #turnstileId: string | undefined;
  #widgetState = "unverified";
  #waiters: ((payload: string) => void)[] = [];
  #started = false;
  #busy = false;
  #form: HTMLFormElement | undefined;
  #alert!: HTMLElement;
  #status!: HTMLElement;
  #widget: AltchaElement | undefined;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: "open" });
  }

  connectedCallback(): void {
    if (this.#started) return;
    this.#started = true;
    this.#labels = labelsOf(this.getAttribute("labels"), (n) => this.getAttribute(n));
    const style = h("style");
    style.textContent = `${altchaCss}\n${STYLES}`;
    this.#alert = h("p", { class: "alert", role: "alert", tabindex: "-1" });
    this.#status = h("p", { class: "status", role: "status" });
    this.#root.replaceChildren(style, this.#status, this.#alert);
    void this.#start();
  }

  get #preview(): boolean {
    return this.hasAttribute("preview");
  }

  get #base(): string {
    return (this.getAttribute("api-base") ?? SCRIPT_BASE ?? location.origin).replace(/\/+$/, "");
  }

  get #key(): string {
    return this.getAttribute("publishable-key") ?? "";
  }

  #t(key: LabelKey, values: Record<string, string | number> = {}): string {
    return fill(this.#labels[key], values);
  }

  async #start(): Promise<void> {
    if (this.#preview) {
      this.#config = {
        livemode: false,
        broker_name: "",
        consent_text: this.getAttribute("consent-text") ?? "",
        consent_text_sha256: "",
        challenge: "altcha",
        turnstile_site_key: null,
        overseas_types: DEFAULT_OVERSEAS,
      };
      this.#render();
      return;
    }
    this.#status.textContent = this.#t("loading");
    try {
      const res = await this.#call("GET", "/config/");
      if (!res.ok) {
        const p = (await res.json().catch(() => ({}))) as Problem;
        this.#status.textContent = "";
        this.#alert.textContent = this.#t("unavailable", { detail: p.detail ?? `HTTP ${res.status}` });
        return;
      }
      this.#config = (await res.json()) as FormConfig;
    } catch {
      this.#status.textContent = "";
      this.#alert.textContent = this.#t("unreachable", { origin: location.origin });
      return;
    }
    this.#status.textContent = "";
    this.#render();
  }

  #call(method: "GET" | "POST", path: string, body?: unknown): Promise<Response> {
    return fetch(`${this.#base}${FORMS_API}${path}`, {
      method,
      mode: "cors",
      credentials: "omit",
      headers: {
        "X-Publishable-Key": this.#key,
        ...(body !== undefined && { "Content-Type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  }

  /** A labelled input (or select) with its hint and error lines, described by both. */
  #field(
    name: string,
    id: string,
    label: string,
    control: HTMLInputElement | HTMLSelectElement,
    hint?: HTMLElement,
  ): HTMLElement {
    control.id = id;
    control.dataset.field = name;
    const error = h("p", { class: "error", id: `${id}-error` });
    control.setAttribute("aria-describedby", [hint?.id, error.id].filter(Boolean).join(" "));
    return h("div", { class: "field" }, h("label", { for: id }, label), control, hint, error);
  }

  #input(name: string, attrs: Record<string, string | boolean | undefined>): HTMLInputElement {
    return h("input", { name, type: "text", required: true, ...attrs });
  }

  #select(name: string, options: [string, string][], value?: string): HTMLSelectElement {
    const s = h("select", { name, required: true });
    for (const [v, text] of options) {
      const o = h("option", { value: v }, text);
      if (v === value) o.selected = true;
      s.append(o);
    }
    return s;
  }

  #render(): void {
    const cfg = this.#config!;
    const t = (k: LabelKey) => this.#t(k);
    const zipField = (name: "origin_zip" | "destination_zip") => {
      const input = this.#input(name, {
        inputmode: "numeric",
        autocomplete: "postal-code",
        maxlength: "5",
        pattern: "[0-9]{5}",
      });
      const place = h("p", { class: "hint", id: `${name}-place`, "aria-live": "polite" });
      input.addEventListener("input", () => {
        place.textContent = "";
        this.#setError(input, "");
        if (ZIP.test(input.value.trim())) void this.#lookupZip(input, place);
      });
      input.addEventListener("blur", () => {
        if (input.value.trim() !== "" && place.textContent === "") void this.#lookupZip(input, place);
      });
      return this.#field(name, name, t(name), input, place);
    };

    const overseas = this.#select("overseas_type", [
      ["DOMESTIC", t("domestic")],
      ["FOREIGN", t("foreign")],
    ]);
    const shipVia = h("select", { name: "ship_via", required: true });
    const fillShipVia = () => {
      const choices = cfg.overseas_types[overseas.value] ?? DEFAULT_OVERSEAS[overseas.value] ?? [];
      shipVia.replaceChildren(...choices.map((c) => h("option", { value: c }, SHIP_VIA_NAMES[c] ?? c)));
    };
    fillShipVia();
    overseas.addEventListener("change", fillShipVia);

    const date = this.#input("estimated_ship_date", { type: "date", min: today(), autocomplete: "off" });

    const vehicles = h("div", { class: "vehicles" });
    const addVehicle = h("button", { type: "button", id: "add-vehicle" }, t("add_vehicle"));
    const drawVehicles = () => {
      vehicles.replaceChildren(...this.#vehicles.map((v, i) => this.#vehicleFieldset(v, i, drawVehicles, addVehicle)));
      addVehicle.hidden = this.#vehicles.length >= MAX_VEHICLES;
    };
    addVehicle.addEventListener("click", () => {
      this.#readVehicles();
      this.#vehicles.push({ year: "", make: "", model: "", type: "CAR", run: true });
      drawVehicles();
      this.#root.getElementById(`v${this.#vehicles.length - 1}-year`)?.focus();
    });
    drawVehicles();

    const consentBox = h("input", { type: "checkbox", id: "consent", name: "consent", required: true });
    consentBox.dataset.field = "consent.accepted";
    consentBox.setAttribute("aria-describedby", "consent-error");
    consentBox.addEventListener("change", () => {
      this.#consentAt = consentBox.checked ? new Date().toISOString() : null;
    });

    const trap = h(
      "div",
      { class: "trap", "aria-hidden": "true", inert: true },
      h("label", { for: "company_website" }, t("company_website")),
      h("input", { type: "text", id: "company_website", name: "company_website", tabindex: "-1", autocomplete: "off" }),
    );

    const submit = h("button", { type: "submit", id: "submit" }, t("submit"));
    const form = h(
      "form",
      { novalidate: true, "aria-label": t("submit") },
      !cfg.livemode && h("p", { class: "note" }, this.#preview ? t("preview") : t("test_mode")),
      h(
        "fieldset",
        {},
        h("legend", {}, t("route")),
        h("div", { class: "row" }, zipField("origin_zip"), zipField("destination_zip")),
        this.#field("estimated_ship_date", "estimated_ship_date", t("estimated_ship_date"), date),
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, t("shipping")),
        h(
          "div",
          { class: "row" },
          this.#field("overseas_type", "overseas_type", t("overseas_type"), overseas),
          this.#field("ship_via", "ship_via", t("ship_via"), shipVia),
        ),
      ),
      h("fieldset", {}, h("legend", {}, t("vehicles")), vehicles, h("div", {}, addVehicle)),
      h(
        "fieldset",
        {},
        h("legend", {}, t("contact")),
        h(
          "div",
          { class: "row" },
          this.#field(
            "first_name",
            "first_name",
            t("first_name"),
            this.#input("first_name", { autocomplete: "given-name", maxlength: "100" }),
          ),
          this.#field(
            "last_name",
            "last_name",
            t("last_name"),
            this.#input("last_name", { autocomplete: "family-name", maxlength: "100" }),
          ),
        ),
        h(
          "div",
          { class: "row" },
          this.#field(
            "email",
            "email",
            t("email"),
            this.#input("email", { type: "email", autocomplete: "email", maxlength: "254" }),
          ),
          this.#field(
            "phone_number",
            "phone_number",
            t("phone_number"),
            this.#input("phone_number", { type: "tel", autocomplete: "tel", maxlength: "32" }),
          ),
        ),
      ),
      h(
        "div",
        { class: "consent" },
        consentBox,
        h("label", { for: "consent" }, cfg.consent_text),
        h("p", { class: "error", id: "consent-error" }),
      ),
      trap,
      this.#preview ? null : this.#challengeWidget(),
      h("div", {}, submit),
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      void this.#submit(submit);
    });
    this.#form = form;
    this.#root.append(form);
  }

  #vehicleFieldset(v: Vehicle, i: number, redraw: () => void, addButton: HTMLElement): HTMLElement {
    const n = i + 1;
    const t = (k: LabelKey) => this.#t(k, { n });
    const maxYear = new Date().getFullYear() + 2;
    const year = this.#input(`vehicles[${i}].year`, { inputmode: "numeric", maxlength: "4", autocomplete: "off" });
    year.value = v.year;
    const make = this.#input(`vehicles[${i}].make`, { maxlength: "100", autocomplete: "off" });
    make.value = v.make;
    const model = this.#input(`vehicles[${i}].model`, { maxlength: "100", autocomplete: "off" });
    model.value = v.model;
    const type = this.#select(`vehicles[${i}].type`, VEHICLE_TYPES, v.type);
    const radio = (value: "yes" | "no", text: string) => {
      const id = `v${i}-run-${value}`;
      const r = h("input", { type: "radio", name: `v${i}-run`, id, value });
      r.checked = v.run === (value === "yes");
      return h("div", { class: "check" }, r, h("label", { for: id }, text));
    };
    const runs = h(
      "fieldset",
      { class: "radios" },
      h("legend", {}, t("vehicle_run")),
      radio("yes", t("runs_yes")),
      radio("no", t("runs_no")),
    );
    let remove: HTMLButtonElement | null = null;
    if (this.#vehicles.length > 1) {
      remove = h("button", { type: "button", class: "remove", id: `v${i}-remove` }, t("remove_vehicle"));
      remove.addEventListener("click", () => {
        this.#readVehicles();
        this.#vehicles.splice(i, 1);
        redraw();
        addButton.focus();
      });
    }
    // The legend is the fieldset's first child: it names the group.
    const fs = h(
      "fieldset",
      { "data-vehicle": String(i) },
      h("legend", {}, t("vehicle")),
      h(
        "div",
        { class: "row" },
        this.#field(`vehicles[${i}].year`, `v${i}-year`, t("year"), year),
        this.#field(`vehicles[${i}].make`, `v${i}-make`, t("make"), make),
        this.#field(`vehicles[${i}].model`, `v${i}-model`, t("model"), model),
        this.#field(`vehicles[${i}].type`, `v${i}-type`, t("type"), type),
      ),
      runs,
      remove && h("div", {}, remove),
    );
    year.dataset.max = String(maxYear);
    return fs;
  }

  /** Keeps what was typed into the vehicles before they are drawn again. */
  #readVehicles(): void {
    const value = (id: string) => (this.#root.getElementById(id) as HTMLInputElement | null)?.value ?? "";
    this.#vehicles = this.#vehicles.map((_, i) => ({
      year: value(`v${i}-year`),
      make: value(`v${i}-make`),
      model: value(`v${i}-model`),
      type: value(`v${i}-type`) || "CAR",
      run: !(this.#root.getElementById(`v${i}-run-no`) as HTMLInputElement | null)?.checked,
    }));
  }

  /**
   * Turnstile instead of ALTCHA: Cloudflare's script (loaded once per page) renders its widget
   * here and hands over a token, sent as `turnstile` (verified by the service). Only when the
   * service is configured for it; the default is self-hosted.
   */
  #turnstileWidget(siteKey: string): HTMLElement {
    const box = h("div", { class: "turnstile" });
    const w = window as unknown as { turnstile?: Turnstile };
    const render = () => {
      this.#turnstileId = w.turnstile?.render(box, {
        sitekey: siteKey,
        callback: (token: string) => {
          this.#payload = token;
          for (const r of this.#waiters.splice(0)) r(token);
        },
        "expired-callback": () => {
          this.#payload = null;
        },
      });
    };
    if (w.turnstile) render();
    else {
      let script = document.querySelector<HTMLScriptElement>(`script[src="${TURNSTILE_SCRIPT}"]`);
      if (!script) {
        script = h("script", { src: TURNSTILE_SCRIPT, async: "" }) as HTMLScriptElement;
        document.head.append(script);
      }
      script.addEventListener("load", render);
    }
    return box;
  }

  #challengeWidget(): HTMLElement {
    const siteKey = this.#config?.turnstile_site_key;
    if (this.#config?.challenge === "turnstile" && siteKey) return this.#turnstileWidget(siteKey);
    const url = `${this.#base}${FORMS_API}/challenge/?publishable_key=${encodeURIComponent(this.#key)}`;
    const widget = h("altcha-widget", {
      name: "altcha",
      // Solved once the person starts on the form (a visitor who never does costs nothing).
      auto: "onfocus",
      challenge: url,
      configuration: JSON.stringify({ hideFooter: true, hideLogo: true, humanInteractionSignature: false }),
    }) as AltchaElement;
    widget.addEventListener("statechange", (e) => {
      const d = (e as CustomEvent<{ state: string; payload?: string }>).detail;
      this.#widgetState = d.state;
      if (d.state === "verified" && d.payload) {
        this.#payload = d.payload;
        for (const w of this.#waiters.splice(0)) w(d.payload);
      } else if (d.state !== "verified") {
        this.#payload = null;
      }
    });
    this.#widget = widget;
    return widget;
  }

  /** Asks the widget for a fresh solution (each one is accepted once). */
  #freshChallenge(): void {
    this.#payload = null;
    const ts = (window as unknown as { turnstile?: Turnstile }).turnstile;
    if (this.#turnstileId !== undefined && ts) {
      ts.reset(this.#turnstileId);
      return;
    }
    const w = this.#widget;
    if (!w?.reset || !w.verify) return;
    w.reset();
    // The widget starts solving by itself when a field of the form takes focus (auto: onfocus), as
    // the field an error names does right after this; a second verify() would abort that solve,
    // which the widget reports as failed (a red popover). Ask only when nothing has started it.
    setTimeout(() => {
      if (this.#widgetState === "unverified") void w.verify?.();
    }, 0);
  }

  /** The widget's solution: from its hidden input, else when it has solved the challenge. */
  #solution(): Promise<string> {
    const fromInput = this.#form ? new FormData(this.#form).get("altcha") : null;
    if (typeof fromInput === "string" && fromInput !== "") return Promise.resolve(fromInput);
    if (this.#payload) return Promise.resolve(this.#payload);
    // Not solving now (expired, failed, or not started): start again.
    if (this.#widget?.verify && this.#widgetState !== "verifying") void this.#widget.verify();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  async #lookupZip(input: HTMLInputElement, place: HTMLElement): Promise<void> {
    const zip = input.value.trim();
    if (!ZIP.test(zip)) {
      this.#setError(input, this.#t("zip_format"));
      return;
    }
    if (this.#preview) return;
    try {
      const res = await this.#call("GET", `/zip/${zip}/`);
      if (input.value.trim() !== zip) return;
      if (res.ok) {
        const p = (await res.json()) as { city: string; state: string };
        place.textContent = `${p.city}, ${p.state}`;
        this.#setError(input, "");
      } else if (res.status === 404) {
        const p = (await res.json().catch(() => ({}))) as Problem;
        place.textContent = "";
        this.#setError(input, p.detail ?? this.#t("zip_unknown"));
      }
    } catch {
      // The city is a convenience: the service checks the ZIP again when the form is sent.
    }
  }

  #setError(control: HTMLElement, message: string): void {
    const error = this.#root.getElementById(`${control.id}-error`);
    if (error) error.textContent = message;
    if (message === "") control.removeAttribute("aria-invalid");
    else control.setAttribute("aria-invalid", "true");
  }

  #control(field: string): HTMLElement | null {
    const m = /^vehicles\[(\d+)\]\.vehicle_run$/.exec(field);
    if (m) return this.#root.getElementById(`v${m[1]}-run-yes`);
    return this.#form?.querySelector<HTMLElement>(`[data-field="${CSS.escape(field)}"]`) ?? null;
  }

  #clearErrors(): void {
    this.#alert.textContent = "";
    for (const el of this.#form?.querySelectorAll<HTMLElement>("[data-field]") ?? []) this.#setError(el, "");
  }

  /** Shows each message under its field (the rest in the alert) and moves focus to the first. */
  #showErrors(errors: { field: string; message: string }[], summary: string): void {
    const unplaced: string[] = [];
    let first: HTMLElement | undefined;
    for (const e of errors) {
      const control = this.#control(e.field);
      if (!control) {
        unplaced.push(e.message);
        continue;
      }
      this.#setError(control, e.message);
      first ??= control;
    }
    this.#alert.textContent = [summary, ...unplaced].join(" ");
    (first ?? this.#alert).focus();
  }

  #fixSummary(n: number): string {
    return n === 1 ? this.#t("fix_field") : this.#t("fix_fields", { n });
  }

  #check(): { field: string; message: string }[] {
    const form = this.#form!;
    const out: { field: string; message: string }[] = [];
    const need = this.#t("required");
    for (const el of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>("[data-field]")) {
      const field = el.dataset.field ?? "";
      if (field === "consent.accepted") continue;
      const v = el.value.trim();
      if (v === "") {
        out.push({ field, message: need });
        continue;
      }
      if (/_zip$/.test(field) && !ZIP.test(v)) out.push({ field, message: this.#t("zip_format") });
      if (/_zip$/.test(field) && el.getAttribute("aria-invalid") === "true") {
        const shown = this.#root.getElementById(`${el.id}-error`)?.textContent;
        if (shown) out.push({ field, message: shown });
      }
      if (field === "email" && !EMAIL.test(v)) out.push({ field, message: this.#t("email_shape") });
      if (field === "phone_number") {
        const digits = v.replace(/[+().\- ]/g, "");
        if (!PHONE_CHARS.test(v) || digits.length < 7 || digits.length > 15) {
          out.push({ field, message: this.#t("phone_shape") });
        }
      }
      if (field === "estimated_ship_date" && v < today()) out.push({ field, message: this.#t("date_past") });
      if (/\.year$/.test(field)) {
        const max = Number(el.dataset.max);
        const y = Number(v);
        if (!/^[0-9]{4}$/.test(v) || y < 1900 || y > max) out.push({ field, message: this.#t("year_range", { max }) });
      }
    }
    const consent = this.#root.getElementById("consent") as HTMLInputElement;
    if (!consent.checked) out.push({ field: "consent.accepted", message: this.#t("consent_required") });
    return out;
  }

  #body(payload: string | null): Record<string, unknown> {
    const form = this.#form!;
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | null)?.value.trim() ?? "";
    this.#readVehicles();
    const page = new URL(location.href);
    const subId = this.getAttribute("sub-id") ?? page.searchParams.get("utm_source");
    const trusted = document.querySelector<HTMLInputElement>('input[name="xxTrustedFormCertUrl"]')?.value;
    const jornaya = document.querySelector<HTMLInputElement>("#leadid_token")?.value;
    return {
      first_name: value("first_name"),
      last_name: value("last_name"),
      email: value("email"),
      phone_number: value("phone_number"),
      origin_zip: value("origin_zip"),
      destination_zip: value("destination_zip"),
      estimated_ship_date: value("estimated_ship_date"),
      overseas_type: value("overseas_type"),
      ship_via: value("ship_via"),
      vehicles: this.#vehicles.map((v) => ({
        year: Number(v.year),
        make: v.make.trim(),
        model: v.model.trim(),
        type: v.type,
        vehicle_run: v.run,
      })),
      ...(subId ? { sub_id: subId.slice(0, 100) } : {}),
      consent: {
        accepted: true,
        text_sha256: this.#config!.consent_text_sha256,
        accepted_at: this.#consentAt ?? new Date().toISOString(),
        ...(trusted ? { trusted_form_cert_url: trusted } : {}),
        ...(jornaya ? { jornaya_lead_id: jornaya } : {}),
      },
      page_url: location.href.slice(0, 2048),
      ...(this.#config?.challenge === "turnstile" ? { turnstile: payload } : { altcha: payload }),
      company_website: value("company_website"),
    };
  }

  async #submit(button: HTMLButtonElement): Promise<void> {
    if (this.#busy) return;
    this.#clearErrors();
    const problems = this.#check();
    if (problems.length > 0) {
      this.#showErrors(problems, this.#fixSummary(problems.length));
      return;
    }
    if (this.#preview) {
      this.#status.textContent = this.#t("preview");
      return;
    }
    this.#busy = true;
    button.disabled = true;
    try {
      if (!this.#payload) this.#status.textContent = this.#t("checking");
      const payload = await this.#solution();
      this.#status.textContent = this.#t("sending");
      let res: Response;
      try {
        res = await this.#call("POST", "/leads/", this.#body(payload));
      } catch {
        this.#status.textContent = "";
        this.#alert.textContent = this.#t("unreachable", { origin: location.origin });
        this.#alert.focus();
        this.#freshChallenge();
        return;
      }
      this.#status.textContent = "";
      if (res.status === 201) {
        const lead = (await res.json()) as { order_number: string; external_id: string; livemode: boolean };
        this.#succeeded(lead);
        return;
      }
      const p = (await res.json().catch(() => ({}))) as Problem;
      this.#freshChallenge();
      if (p.code === "validation_error" && p.errors?.length) {
        this.#showErrors(p.errors, this.#fixSummary(p.errors.length));
      } else if (p.code === "challenge_invalid") {
        this.#showErrors([], this.#t("challenge_again"));
      } else if (res.status === 429) {
        this.#showErrors([], this.#t("retry_after", { s: res.headers.get("Retry-After") ?? "60" }));
      } else {
        this.#showErrors(
          (p.errors ?? []).filter((e) => this.#control(e.field)),
          this.#t("refused", { detail: p.detail ?? p.title ?? `HTTP ${res.status}` }),
        );
      }
    } finally {
      this.#busy = false;
      button.disabled = false;
    }
  }

  #succeeded(lead: { order_number: string; external_id: string; livemode: boolean }): void {
    this.#form?.remove();
    this.#form = undefined;
    this.#alert.textContent = "";
    this.#status.className = "status success";
    this.#status.tabIndex = -1;
    this.#status.textContent = this.#t("success", { order: lead.order_number });
    this.#status.focus();
    this.dispatchEvent(
      new CustomEvent("lead-submitted", {
        bubbles: true,
        composed: true,
        detail: { order_number: lead.order_number, external_id: lead.external_id, livemode: lead.livemode },
      }),
    );
  }
}

if (!customElements.get("lead-quote-form")) customElements.define("lead-quote-form", LeadQuoteForm);
