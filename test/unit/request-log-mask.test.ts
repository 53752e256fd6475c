/**
 * What the request log keeps of a body (request-log.mask.ts) and which requests it lists one by
 * one (request-log.listing.ts), on their own: fast enough to run against every mutant.
 */
import { describe, expect, it } from "vitest";
import {
  ANONYMOUS_PER_MINUTE,
  createListing,
  PER_CALLER_PER_MINUTE,
  READS_PER_CALLER_PER_MINUTE,
} from "../../src/request-log/request-log.listing.ts";
import { BODY_LIMIT_BYTES, described, keptBody, MAX_KEY, MAX_TEXT } from "../../src/request-log/request-log.mask.ts";
import { isRead } from "../../src/request-log/request-log.ts";

const kept = (body: unknown) => keptBody(body).body as Record<string, unknown>;

describe("the request log's allow-list of body members", () => {
  it("keeps the contract's non-personal members as sent", () => {
    const body = {
      external_id: "crm-1",
      origin_zip: "90210",
      destination_zip: "10001",
      origin_city: "Beverly Hills",
      destination_city: "New York",
      origin_state: 5,
      destination_state: 33,
      estimated_ship_date: "2027-01-01",
      overseas_type: "DOMESTIC",
      ship_via: "OPEN",
      sub_id: "fb-1",
      page_size: 10,
      page_token: "abc",
      state: "LEAD",
      updated_after: "2026-01-01T00:00:00Z",
      created_after: "2026-01-01T00:00:00Z",
      created_before: "2026-02-01T00:00:00Z",
      vehicles: [
        { year: 2020, make: "Honda", model: "Accord", type: "CAR", tariff: 900, deposit: 100, vehicle_run: true },
      ],
      consent: {
        consented_at: "2026-01-01T00:00:00Z",
        trusted_form_cert_url: "https://cert.example/1",
        jornaya_lead_id: "J-1",
      },
    };
    expect(keptBody(body)).toEqual({ body, truncated: false });
  });

  it("masks the contract's personal members to a hint", () => {
    expect(
      kept({
        first_name: "Maria",
        last_name: "Gonzalez",
        company_name: "Gonzalez Hauling",
        email: "maria@example.com",
        phone_number: "+1 (310) 555-0142",
        vehicles: [{ vin: "1HGCM82633A004352" }],
        consent: { ip_address: "203.0.113.7" },
      }),
    ).toEqual({
      first_name: "M…",
      last_name: "G…",
      company_name: "G…",
      email: "m***@example.com",
      phone_number: "…0142",
      vehicles: [{ vin: "…4352" }],
      consent: { ip_address: "203.0.113.0/24" },
    });
  });

  it("describes a personal member sent as anything but text, and a null contract object", () => {
    const body = kept({
      first_name: 42,
      last_name: ["G"],
      email: { address: "maria@example.com" },
      phone_number: 3105550142,
      source_url: 7,
      vehicles: [{ vin: 12345678 }, null, "x"],
      consent: { ip_address: null, page_url: false },
    });
    expect(body).toEqual({
      first_name: "…number",
      last_name: "…array(1)",
      email: "…object(1)",
      phone_number: "…number",
      source_url: "…number",
      vehicles: [{ vin: "…number" }, "null", "…string(1)"],
      consent: { ip_address: "null", page_url: "…boolean" },
    });
    expect(kept({ consent: null }).consent).toBe("null");
    expect(kept({ external_id: null, year: false }).year).toBe(false);
    expect(kept({ external_id: null }).external_id).toBe(null);
    // A phone's non-digits are dropped, whatever they are.
    expect(kept({ phone_number: "tel:+1-310-555-0142 ext" }).phone_number).toBe("…0142");
  });

  it("masks an email without a domain, or with @ first, to its first character", () => {
    expect(kept({ email: "a@b.example" }).email).toBe("a***@b.example");
    expect(kept({ email: "maria" }).email).toBe("m***");
    expect(kept({ email: "@example.com" }).email).toBe("@***");
    expect(kept({ email: "" }).email).toBe("…string(0)");
    expect(kept({ first_name: "" }).first_name).toBe("…string(0)");
    // The first character, not the first UTF-16 unit.
    expect(kept({ first_name: "😀bc" }).first_name).toBe("😀…");
    expect(kept({ email: "😀x@example.com" }).email).toBe("😀***@example.com");
  });

  it("masks IPv6 to its /48 and an IPv4-mapped address as IPv4; anything else whole", () => {
    const ip = (v: unknown) => (kept({ consent: { ip_address: v } }).consent as Record<string, unknown>).ip_address;
    expect(ip("2001:db8:aaaa:bbbb:cccc::1")).toBe("2001:db8:aaaa::/48");
    expect(ip("::ffff:198.51.100.77")).toBe("198.51.100.0/24");
    expect(ip("not an address")).toBe("…string(14)");
    expect(ip(12345)).toBe("…number");
  });

  it("keeps a URL's origin and path, never its query, fragment or credentials", () => {
    const url = (v: unknown) => kept({ source_url: v }).source_url;
    expect(url("https://x.example/form")).toBe("https://x.example/form");
    expect(url("https://x.example/form?email=m@example.com")).toBe("https://x.example/form?…");
    expect(url("https://x.example/form#maria")).toBe("https://x.example/form?…");
    expect(url("https://maria:secret@x.example/")).toBe("…string(31)");
    expect(url("https://maria@x.example/")).toBe("…string(24)");
    expect(url("https://:secret@x.example/")).toBe("…string(26)");
    expect(url("not a url")).toBe("…string(9)");
    expect(
      (kept({ consent: { page_url: "https://x.example/p?phone=1" } }).consent as Record<string, unknown>).page_url,
    ).toBe("https://x.example/p?…");
  });

  it("describes what the contract does not name, free text, and values of the wrong shape", () => {
    expect(
      kept({
        email_address: "maria@example.com",
        emailAddress: "maria@example.com",
        mobile: "+1 310 555 0142",
        phone2: 3105550142,
        "customer name": { first: "Maria" },
        address: ["1 Main St", "Apt 2"],
        note_from_shipper: "call Maria",
        flag: true,
        nothing: null,
        external_id: { nested: "x" },
        vehicles: "a Honda",
        consent: "yes",
      }),
    ).toEqual({
      email_address: "…string(17)",
      emailAddress: "…string(17)",
      mobile: "…string(15)",
      phone2: "…number",
      "customer name": "…object(1)",
      address: "…array(2)",
      note_from_shipper: "…string(10)",
      flag: "…boolean",
      nothing: "null",
      external_id: "…object(1)",
      vehicles: "…string(7)",
      consent: "…string(3)",
    });
    expect(kept({ consent: { consent_text: "I agree", user_agent: "Mozilla/5.0" } }).consent).toEqual({
      consent_text: "…string(7)",
      user_agent: "…string(11)",
    });
  });

  it("matches keys without case, underscores or hyphens, as REST, Connect JSON and gRPC name them", () => {
    expect(
      kept({ firstName: "Maria", PHONE_NUMBER: "555-0142", "Phone-Number": "555-0143", originZip: "90210" }),
    ).toEqual({
      firstName: "M…",
      PHONE_NUMBER: "…0142",
      "Phone-Number": "…0143",
      originZip: "90210",
    });
  });

  it("describes objects nested deeper than the contract's, and lists of anything but vehicles", () => {
    expect(kept({ vehicles: [{ owner: { email: "m@example.com" } }] }).vehicles).toEqual([{ owner: "…object(1)" }]);
    expect(kept({ vehicles: [[{ email: "m@example.com" }]] }).vehicles).toEqual(["…array(1)"]);
    // A vehicle's members are two levels down: one level deeper is described.
    expect(kept({ vehicles: [{ make: { model: "x" } }] }).vehicles).toEqual([{ make: "…object(1)" }]);
    expect(kept({ consent: { vehicles: [{ vin: "1HGCM82633A004352" }] } }).consent).toEqual({
      vehicles: [{ vin: "…string(17)" }],
    });
    // Members nested in a contract object are masked by the same table, down to three levels.
    expect(kept({ consent: { consent: { ip_address: "203.0.113.7" } } }).consent).toEqual({
      consent: { ip_address: "203.0.113.0/24" },
    });
    expect(kept({ consent: { consent: { consent: { ip_address: "203.0.113.7" } } } }).consent).toEqual({
      consent: { consent: { ip_address: "…string(11)" } },
    });
  });

  it("describes a body that is not an object, and keeps none of undefined or null", () => {
    expect(keptBody([{ email: "m@example.com" }])).toEqual({ body: "…array(1)", truncated: false });
    expect(keptBody("maria@example.com")).toEqual({ body: "…string(17)", truncated: false });
    expect(keptBody(42)).toEqual({ body: "…number", truncated: false });
    expect(keptBody(null)).toEqual({ body: null, truncated: false });
    expect(keptBody(undefined)).toEqual({ body: null, truncated: false });
  });

  it("keeps inherited names as ordinary keys, and never mutates the body", () => {
    const body = JSON.parse('{"__proto__": {"email": "m@example.com"}, "constructor": "x", "toString": 1}');
    const copy = structuredClone(body);
    const out = kept(body);
    expect(Object.keys(out)).toEqual(["__proto__", "constructor", "toString"]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"__proto__":"…object(1)","constructor":"…string(1)","toString":"…number"}');
    expect(body).toEqual(copy);
  });

  it("cuts text and keys to their limits", () => {
    const long = "z".repeat(MAX_TEXT + 10);
    expect(kept({ external_id: long }).external_id).toBe(`${"z".repeat(MAX_TEXT)}…`);
    expect(kept({ external_id: "z".repeat(MAX_TEXT) }).external_id).toBe("z".repeat(MAX_TEXT));
    const key = "k".repeat(MAX_KEY + 5);
    expect(Object.keys(kept({ [key]: 1 }))).toEqual([`${"k".repeat(MAX_KEY)}…`]);
    expect(Object.keys(kept({ ["k".repeat(MAX_KEY)]: 1 }))).toEqual(["k".repeat(MAX_KEY)]);
    // A key is remembered once looked up: the same key answers the same, long or short.
    for (let i = 0; i < 3; i += 1) expect(kept({ [`email${"_".repeat(MAX_KEY)}`]: "x@y.example" })).toBeDefined();
    expect(kept({ [key]: 1 })[`${"k".repeat(MAX_KEY)}…`]).toBe("…number");
    // A key past the limit still masks as its contract member.
    expect(kept({ [`email${"_".repeat(MAX_KEY)}`]: "maria@example.com" })).toEqual({
      [`email${"_".repeat(MAX_KEY - 5)}…`]: "m***@example.com",
    });
  });

  it("describes values by type and size", () => {
    expect(described("abc")).toBe("…string(3)");
    expect(described("😀")).toBe("…string(1)");
    expect(described([1, 2])).toBe("…array(2)");
    expect(described({ a: 1, b: 2 })).toBe("…object(2)");
    expect(described(1)).toBe("…number");
    expect(described(false)).toBe("…boolean");
    expect(described(null)).toBe("null");
  });
});

describe("the request log's body limit", () => {
  const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

  it("keeps a body within the limit whole, and one just over it cut", () => {
    const within = { external_id: "x", vehicles: [{ make: "m".repeat(100) }] };
    expect(keptBody(within, size(within))).toEqual({ body: within, truncated: false });
    const cut = keptBody(within, size(within) - 1);
    expect(cut.truncated).toBe(true);
    expect(size(cut.body)).toBeLessThanOrEqual(size(within) - 1);
  });

  it("keeps plain members first, then as many list items as fit, in order", () => {
    const vehicles = Array.from({ length: 500 }, (_, i) => ({ year: 2020, make: `Make${i}` }));
    const { body, truncated } = keptBody({ vehicles, external_id: "crm-9", origin_zip: "90210" });
    expect(truncated).toBe(true);
    expect(size(body)).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    const b = body as { external_id: string; origin_zip: string; vehicles: { make: string }[] };
    expect(b.external_id).toBe("crm-9");
    expect(b.origin_zip).toBe("90210");
    expect(b.vehicles.length).toBeGreaterThan(50);
    expect(b.vehicles.length).toBeLessThan(500);
    expect(b.vehicles.map((v) => v.make)).toEqual(vehicles.slice(0, b.vehicles.length).map((v) => v.make));
    // As many as fit: one more would not.
    const oneMore = { ...b, vehicles: vehicles.slice(0, b.vehicles.length + 1) };
    expect(size(oneMore)).toBeGreaterThan(BODY_LIMIT_BYTES);
  });

  it("bounds a body of thousands of unknown members", () => {
    const body = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`field${i}`, "v"]));
    const { body: out, truncated } = keptBody(body);
    expect(truncated).toBe(true);
    expect(size(out)).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    expect(size(out)).toBeGreaterThan(BODY_LIMIT_BYTES - 40);
    expect(Object.keys(out as object)[0]).toBe("field0");
  });

  it("cuts within a nested object when it is what does not fit", () => {
    const consent = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`c${i}`, "x"]));
    const { body, truncated } = keptBody({ external_id: "a", consent }, 200);
    expect(truncated).toBe(true);
    const c = (body as { consent: Record<string, string> }).consent;
    expect(Object.keys(c).length).toBeGreaterThan(3);
    expect(Object.keys(c).length).toBeLessThan(40);
    expect(size(body)).toBeLessThanOrEqual(200);
  });

  it("describes a member too big for the room left, and stops when there is none", () => {
    expect(keptBody({ external_id: "x".repeat(200) }, 20)).toEqual({ body: {}, truncated: true });
    expect(keptBody({ a: 1 }, 2)).toEqual({ body: {}, truncated: true });
  });

  it("keeps an own __proto__ key when it cuts", () => {
    const body = JSON.parse(`{"__proto__": "x", "pad": "${"p".repeat(5000)}"}`);
    const out = keptBody(body, 100).body as object;
    expect(Object.keys(out)).toContain("__proto__");
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});

describe("which requests the log lists one by one", () => {
  const at = new Date("2026-11-28T02:00:05Z");
  const entry = (over: Partial<Parameters<ReturnType<typeof createListing>>[0]> = {}) => ({
    providerId: 7 as number | null,
    livemode: true as boolean | null,
    gated: true,
    outcome: "accepted",
    read: false,
    clientIp: "192.0.2.1" as string | null,
    createdAt: at,
    ...over,
  });

  it("lists every change the gate admitted and every refused read, however many", () => {
    const listing = createListing();
    for (let i = 0; i < 1000; i += 1) expect(listing(entry({ outcome: i % 2 ? "rejected" : "accepted" }))).toBe(true);
    for (let i = 0; i < 100; i += 1)
      expect(listing(entry({ read: true, outcome: i % 2 ? "rejected" : "failed" }))).toBe(true);
  });

  it("lists a provider's first ten answered reads of a minute per mode as examples, and counts the rest", () => {
    const listing = createListing();
    const read = (over = {}) => listing(entry({ read: true, ...over }));
    const first = Array.from({ length: READS_PER_CALLER_PER_MINUTE + 5 }, () => read());
    expect(first.filter(Boolean)).toHaveLength(READS_PER_CALLER_PER_MINUTE);
    expect(first.slice(0, READS_PER_CALLER_PER_MINUTE).every(Boolean)).toBe(true);
    expect(read({ livemode: false })).toBe(true);
    expect(read({ providerId: 8 })).toBe(true);
    // Reads have their own budget: the same provider's refusals by a limit still have theirs.
    expect(listing(entry({ outcome: "rate_limited" }))).toBe(true);
    expect(read({ createdAt: new Date(at.getTime() + 60_000) })).toBe(true);
  });

  it("tells reads from changes by the operation", () => {
    expect(isRead("GET /api/v1/public/leads/{external_id}/")).toBe(true);
    expect(isRead("HEAD /api/v1/public/leads/")).toBe(true);
    expect(isRead("leadprovider.v1.PublicLeadService/GetLead")).toBe(true);
    expect(isRead("leadprovider.v1.PublicLeadService/ListEvents")).toBe(true);
    expect(isRead("POST /api/v1/public/leads/")).toBe(false);
    expect(isRead("leadprovider.v1.PublicLeadService/CreateLead")).toBe(false);
    expect(isRead("leadprovider.v1.PublicLeadService/Getaway")).toBe(false);
    expect(isRead("POST /api/v1/public/GET /x")).toBe(false);
  });

  it("lists a caller's first ten refusals by a limit in a minute, then counts; the next minute starts again", () => {
    const listing = createListing();
    const limited = (over = {}) => listing(entry({ outcome: "rate_limited", ...over }));
    const first = Array.from({ length: PER_CALLER_PER_MINUTE + 5 }, () => limited());
    expect(first.filter(Boolean)).toHaveLength(PER_CALLER_PER_MINUTE);
    expect(first.slice(0, PER_CALLER_PER_MINUTE).every(Boolean)).toBe(true);
    // Another mode and another provider have their own.
    expect(limited({ livemode: false })).toBe(true);
    expect(limited({ providerId: 8 })).toBe(true);
    // Admitted requests are still listed.
    expect(listing(entry())).toBe(true);
    expect(limited({ createdAt: new Date(at.getTime() + 60_000) })).toBe(true);
  });

  it("treats a request the gate never saw, identified afterwards, as unadmitted", () => {
    const listing = createListing();
    const results = Array.from({ length: 12 }, () => listing(entry({ gated: false, outcome: "rejected" })));
    expect(results.filter(Boolean)).toHaveLength(PER_CALLER_PER_MINUTE);
  });

  it("lists ten a minute an address of requests with no provider, and 120 from all addresses", () => {
    const listing = createListing();
    const anon = (ip: string, minute = 0) =>
      listing(
        entry({
          providerId: null,
          livemode: null,
          gated: false,
          outcome: "rejected",
          clientIp: ip,
          createdAt: new Date(at.getTime() + minute * 60_000),
        }),
      );
    expect(Array.from({ length: 15 }, () => anon("198.51.100.1")).filter(Boolean)).toHaveLength(PER_CALLER_PER_MINUTE);
    let listed = PER_CALLER_PER_MINUTE;
    for (let i = 2; i < 40; i += 1) for (let k = 0; k < 5; k += 1) if (anon(`198.51.100.${i}`)) listed += 1;
    expect(listed).toBe(ANONYMOUS_PER_MINUTE);
    // Providers' refusals are not held back by the anonymous budget.
    expect(listing(entry({ outcome: "rate_limited" }))).toBe(true);
    // The next minute, anonymous requests are listed again.
    expect(anon("198.51.100.1", 1)).toBe(true);
  });

  it("counts a request with no provider even if its key names one afterwards only when unadmitted", () => {
    const listing = createListing();
    // A null address is one caller like any other.
    const r = Array.from({ length: 11 }, () =>
      listing(entry({ providerId: null, livemode: null, gated: false, clientIp: null, outcome: "rejected" })),
    );
    expect(r.filter(Boolean)).toHaveLength(PER_CALLER_PER_MINUTE);
  });

  it("counts a minute by its start: seconds apart in one minute share a budget; a minute apart do not", () => {
    const listing = createListing();
    const anon = (ms: number) =>
      listing(
        entry({
          providerId: null,
          livemode: null,
          gated: false,
          outcome: "rejected",
          createdAt: new Date(Date.UTC(2026, 10, 28, 2, 0, 0) + ms),
        }),
      );
    const same = Array.from({ length: 12 }, (_, i) => anon(i * 4_900));
    expect(same.filter(Boolean)).toHaveLength(PER_CALLER_PER_MINUTE);
    expect(anon(60_000)).toBe(true);
    // The first minute of all (the epoch's) is a minute like any other.
    const epoch = createListing();
    const early = Array.from({ length: 12 }, (_, i) =>
      epoch(entry({ outcome: "rate_limited", createdAt: new Date(i * 1000) })),
    );
    expect(early.filter(Boolean)).toHaveLength(PER_CALLER_PER_MINUTE);
    const late = Array.from({ length: 12 }, (_, i) =>
      epoch(entry({ outcome: "rate_limited", createdAt: new Date(60_000 + i * 1000) })),
    );
    expect(late.filter(Boolean)).toHaveLength(PER_CALLER_PER_MINUTE);
  });

  it("never spends the anonymous budget on providers' refusals", () => {
    const listing = createListing();
    for (let p = 1; p <= 200; p += 1) expect(listing(entry({ providerId: p, outcome: "rate_limited" }))).toBe(true);
    expect(
      listing(entry({ providerId: null, livemode: null, gated: false, outcome: "rejected", clientIp: "203.0.113.9" })),
    ).toBe(true);
  });

  it("stops remembering new callers past ten thousand in a minute, and counts them", () => {
    const listing = createListing();
    let listed = 0;
    for (let i = 0; i < 10_050; i += 1) if (listing(entry({ providerId: i + 1, outcome: "rate_limited" }))) listed += 1;
    expect(listed).toBe(10_000);
    // One already remembered still has its share.
    expect(listing(entry({ providerId: 1, outcome: "rate_limited" }))).toBe(true);
  });
});
