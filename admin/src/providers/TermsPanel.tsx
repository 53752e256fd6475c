/**
 * The provider page's Terms panel: the provider's commercial terms in words, an editor for them
 * (prices in dollars, price rules added, removed and reordered, settlement days, returns), saved
 * with `PUT /api/v1/lead_providers/{id}/terms/` (each refused member shown under its field), and
 * "What would this lead earn?": the draft terms tried on a lead with
 * `POST /api/v1/lead_providers/{id}/terms/quote/`, which stores nothing.
 */
import { Alert, Autocomplete, Box, Button, Divider, MenuItem, Stack, TextField, Typography } from "@mui/material";
import { useCallback, useEffect, useState } from "react";
import { useNotify, useRecordContext } from "react-admin";
import { cents, type RuleWhen, termsSentences } from "../../../ui/src/money.ts";
import { api, data, type Schemas } from "../api.ts";
import { Panel } from "./Panel.tsx";

type Terms = Schemas["VersionedTerms"];
type Quote = Schemas["ProviderQuote"];
type Reason = Schemas["ReturnReason"];

const OVERSEAS = ["DOMESTIC", "FOREIGN"];
const SHIP_VIA = ["OPEN", "ENCLOSED", "DRIVE_AWAY", "CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF"];
const VEHICLES = [
  "CAR",
  "SUV",
  "PICKUP",
  "VAN",
  "MINIVAN",
  "MOTORCYCLE",
  "ATV",
  "BOAT",
  "RV",
  "TRAILER",
  "HEAVY_EQUIPMENT",
  "OTHER",
];
const REASONS: Reason[] = [
  "invalid_contact",
  "not_requested",
  "out_of_area",
  "already_shipped",
  "test_or_fraud",
  "other",
];

/** A rule as edited: its price in dollars as typed, its conditions; `key` keeps its inputs as it moves. */
interface RuleDraft {
  key: number;
  price: string;
  when: RuleWhen;
  minVehicles: string;
}
interface Draft {
  defaultPrice: string;
  extraVehicle: string;
  settlementDays: string;
  rules: RuleDraft[];
  windowHours: string;
  maxRatePct: string;
  contestHours: string;
  reasons: Reason[];
  autoApprove: Reason[];
}

let keys = 0;
const dollars = (c: number) => (c / 100).toFixed(2);

function draftOf(t: Terms): Draft {
  return {
    defaultPrice: dollars(t.default_price_cents),
    extraVehicle: dollars(t.extra_vehicle_cents),
    settlementDays: String(t.settlement_days),
    rules: t.price_rules.map((r) => {
      const { min_vehicles, ...when } = r.when as RuleWhen;
      keys += 1;
      return { key: keys, price: dollars(r.price_cents), when, minVehicles: min_vehicles ? String(min_vehicles) : "" };
    }),
    windowHours: String(t.returns.window_hours ?? 72),
    maxRatePct: String(Math.round((t.returns.max_rate ?? 0.15) * 1000) / 10),
    contestHours: String(t.returns.contest_hours ?? 48),
    reasons: (t.returns.reasons ?? REASONS) as Reason[],
    autoApprove: (t.returns.auto_approve ?? []) as Reason[],
  };
}

/** Dollars as typed → whole cents; what is not a number is sent as typed, for the service to name. */
const toCents = (s: string): unknown => {
  const t = s.trim().replace(/^\$/, "").replaceAll(",", "");
  if (t === "") return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? Math.round(n * 100) : s;
};
const toInt = (s: string): unknown => {
  if (s.trim() === "") return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : s;
};

/** The terms document a draft stands for (what PUT and the preview take). */
function bodyOf(d: Draft): Schemas["Terms"] {
  const clean = (w: RuleWhen) =>
    Object.fromEntries(
      Object.entries(w).filter(([, v]) => v !== undefined && v !== "" && !(Array.isArray(v) && v.length === 0)),
    );
  return {
    default_price_cents: toCents(d.defaultPrice),
    extra_vehicle_cents: toCents(d.extraVehicle),
    settlement_days: toInt(d.settlementDays),
    price_rules: d.rules.map((r) => ({
      when: { ...clean(r.when), ...(r.minVehicles.trim() !== "" && { min_vehicles: toInt(r.minVehicles) }) },
      price_cents: toCents(r.price),
    })),
    returns: {
      window_hours: toInt(d.windowHours),
      max_rate: d.maxRatePct.trim() === "" ? undefined : Number(d.maxRatePct) / 100,
      contest_hours: toInt(d.contestHours),
      reasons: d.reasons,
      auto_approve: d.autoApprove,
    },
  } as Schemas["Terms"];
}

/** The lead the preview prices: what the conditions look at, with a made-up customer. */
interface SampleLead {
  originZip: string;
  destinationZip: string;
  vehicles: string;
  vehicleType: string;
  runs: "yes" | "no";
  subId: string;
  overseasType: string;
  shipVia: string;
}
const SAMPLE: SampleLead = {
  originZip: "90210",
  destinationZip: "10001",
  vehicles: "1",
  vehicleType: "CAR",
  runs: "yes",
  subId: "",
  overseasType: "DOMESTIC",
  shipVia: "OPEN",
};

function leadOf(s: SampleLead) {
  const ship = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
  const n = Number(s.vehicles);
  return {
    external_id: "preview",
    first_name: "Preview",
    last_name: "Lead",
    email: "preview@example.com",
    phone_number: "+1 (310) 555-0100",
    origin_zip: s.originZip,
    destination_zip: s.destinationZip || undefined,
    estimated_ship_date: ship,
    overseas_type: s.overseasType,
    ship_via: s.shipVia,
    ...(s.subId.trim() !== "" && { sub_id: s.subId.trim() }),
    vehicles: Array.from({ length: Number.isInteger(n) && n > 0 && n <= 20 ? n : 1 }, () => ({
      year: new Date().getFullYear() - 2,
      make: "Toyota",
      model: "Camry",
      type: s.vehicleType,
      tariff: 1000,
      deposit: 100,
      vehicle_run: s.runs === "yes",
    })),
  } as Schemas["LeadCreate"];
}

/** Field errors of a refused call, by field. */
const fieldErrors = (e: unknown) => (e as { body?: { errors?: Record<string, string> } }).body?.errors ?? {};

export function TermsPanel() {
  const record = useRecordContext<{ id: number; name: string }>();
  const notify = useNotify();
  const id = record?.id;
  const [terms, setTerms] = useState<Terms | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [states, setStates] = useState<string[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [sample, setSample] = useState<SampleLead>(SAMPLE);
  const [quote, setQuote] = useState<Quote | null>(null);
  const [quoteErrors, setQuoteErrors] = useState<Record<string, string>>({});
  const [quoteFailure, setQuoteFailure] = useState<string | null>(null);

  const load = useCallback(async () => {
    if (id === undefined) return;
    try {
      const t = await data(api.GET("/api/v1/lead_providers/{id}/terms/", { params: { path: { id } } }));
      setTerms(t);
      setDraft(draftOf(t));
    } catch (err) {
      setFailure(err instanceof Error ? err.message : String(err));
    }
  }, [id]);
  useEffect(() => {
    void load();
    data(api.GET("/api/v1/common/states/"))
      .then((list) => setStates(list.map((s) => s.code)))
      .catch(() => setStates([]));
  }, [load]);

  if (!terms || !draft) {
    return (
      <Panel title="Terms">
        {failure ? <Alert severity="error">{failure}</Alert> : <Typography variant="body2">Loading…</Typography>}
      </Panel>
    );
  }

  const edit = (patch: Partial<Draft>) => {
    setDraft({ ...draft, ...patch });
    setQuote(null);
    setFailure(null);
  };
  /** The service's words about `field` or anything under it (`price_rules[0]` takes its conditions'). */
  const err = (field: string, all = errors) =>
    Object.entries(all)
      .filter(([f]) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`))
      .map(([, m]) => m)
      .join(" ");
  const setRule = (i: number, patch: Partial<RuleDraft>) =>
    edit({ rules: draft.rules.map((r, j) => (j === i ? { ...r, ...patch } : r)) });
  const setWhen = (i: number, patch: Partial<RuleWhen>) =>
    setRule(i, { when: { ...(draft.rules[i] as RuleDraft).when, ...patch } });
  const move = (i: number, by: -1 | 1) => {
    const rules = [...draft.rules];
    const [rule] = rules.splice(i, 1);
    rules.splice(i + by, 0, rule as RuleDraft);
    edit({ rules });
  };

  const save = async () => {
    setSaving(true);
    setErrors({});
    setFailure(null);
    try {
      const saved = await data(
        api.PUT("/api/v1/lead_providers/{id}/terms/", { params: { path: { id: id as number } }, body: bodyOf(draft) }),
      );
      setTerms(saved);
      setDraft(draftOf(saved));
      notify(`Terms saved: version ${saved.version}`, { type: "success" });
    } catch (e) {
      setErrors(fieldErrors(e));
      setFailure(e instanceof Error ? e.message : String(e));
    } finally {
      setSaving(false);
    }
  };

  const preview = async () => {
    setQuote(null);
    setQuoteErrors({});
    setQuoteFailure(null);
    setErrors({});
    setFailure(null);
    try {
      setQuote(
        await data(
          api.POST("/api/v1/lead_providers/{id}/terms/quote/", {
            params: { path: { id: id as number } },
            body: { lead: leadOf(sample), terms: bodyOf(draft) },
          }),
        ),
      );
    } catch (e) {
      const all = fieldErrors(e);
      // The draft's refused members go under their fields in the editor, the lead's under the preview's.
      setErrors(
        Object.fromEntries(
          Object.entries(all)
            .filter(([f]) => f.startsWith("terms."))
            .map(([f, m]) => [f.slice(6), m]),
        ),
      );
      setQuoteErrors(
        Object.fromEntries(
          Object.entries(all)
            .filter(([f]) => f.startsWith("lead"))
            .map(([f, m]) => [f.replace(/^lead\.?/, ""), m]),
        ),
      );
      setQuoteFailure(e instanceof Error ? e.message : String(e));
    }
  };

  const words = termsSentences(terms);
  const money = (label: string, field: string, value: string, onChange: (v: string) => void, help: string) => (
    <TextField
      fullWidth={false}
      label={label}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      slotProps={{
        input: { startAdornment: <span aria-hidden="true">$&nbsp;</span> },
        htmlInput: { inputMode: "decimal" },
      }}
      helperText={err(field) || help}
      error={Boolean(err(field))}
      sx={{ minWidth: 200 }}
    />
  );
  const integer = (label: string, field: string, value: string, onChange: (v: string) => void, help: string) => (
    <TextField
      fullWidth={false}
      label={label}
      value={value}
      type="number"
      onChange={(e) => onChange(e.target.value)}
      helperText={err(field) || help}
      error={Boolean(err(field))}
      sx={{ minWidth: 200 }}
    />
  );
  const choice = (label: string, value: string | undefined, options: string[], onChange: (v: string) => void) => (
    <TextField
      fullWidth={false}
      select
      size="small"
      label={label}
      value={value ?? ""}
      onChange={(e) => onChange(e.target.value)}
      sx={{ minWidth: 210 }}
    >
      <MenuItem value="">Any</MenuItem>
      {options.map((o) => (
        <MenuItem key={o} value={o}>
          {o}
        </MenuItem>
      ))}
    </TextField>
  );
  const stateList = (i: number, key: "origin_states" | "destination_states", label: string) => {
    const rule = draft.rules[i] as RuleDraft;
    const field = `price_rules[${i}].when.${key}`;
    return (
      <Autocomplete
        multiple
        size="small"
        options={states}
        value={rule.when[key] ?? []}
        onChange={(_e, value) => setWhen(i, { [key]: value.length === 0 ? undefined : value })}
        sx={{ minWidth: 240, flex: "1 1 240px" }}
        renderInput={(params) => (
          <TextField
            {...params}
            label={`Rule ${i + 1} ${label}`}
            placeholder={rule.when[key] ? "" : "Any"}
            helperText={err(field) || " "}
            error={Boolean(err(field))}
          />
        )}
      />
    );
  };

  return (
    <Panel title="Terms">
      <Stack spacing={2}>
        <Box data-testid="terms-in-words">
          <Typography variant="body2" gutterBottom>
            Version {terms.version}
            {terms.effective_at
              ? `, in force since ${new Date(terms.effective_at).toLocaleString()}`
              : " (the defaults: never set)"}
            . Prices in {terms.currency}.
          </Typography>
          <Box component="ul" sx={{ my: 0, pl: 3 }}>
            {[...words.prices, words.settlement, words.returns].map((s) => (
              <Typography component="li" variant="body2" key={s}>
                {s}
              </Typography>
            ))}
          </Box>
        </Box>
        <Divider />
        <Typography component="h3" variant="subtitle1">
          Edit the terms
        </Typography>
        <Stack direction={{ xs: "column", sm: "row" }} spacing={2} useFlexGap flexWrap="wrap">
          {money(
            "Default price",
            "default_price_cents",
            draft.defaultPrice,
            (v) => edit({ defaultPrice: v }),
            "A lead no rule matches",
          )}
          {money(
            "Extra vehicle price",
            "extra_vehicle_cents",
            draft.extraVehicle,
            (v) => edit({ extraVehicle: v }),
            "Per vehicle after the first",
          )}
          {integer(
            "Settlement days",
            "settlement_days",
            draft.settlementDays,
            (v) => edit({ settlementDays: v }),
            "Pending this long, then available",
          )}
        </Stack>
        <Typography component="h3" variant="subtitle1">
          Price rules (the first that matches sets the price)
        </Typography>
        {err("price_rules") && !draft.rules.length && <Alert severity="error">{err("price_rules")}</Alert>}
        {draft.rules.length === 0 && (
          <Typography variant="body2" color="text.secondary">
            No rules: every lead earns the default price.
          </Typography>
        )}
        {draft.rules.map((rule, i) => (
          <Box
            key={rule.key}
            role="group"
            aria-label={`Rule ${i + 1}`}
            sx={{ border: 1, borderColor: "divider", borderRadius: 1, p: 1.5 }}
          >
            <Stack direction="row" spacing={1} alignItems="center" flexWrap="wrap" useFlexGap sx={{ mb: 1 }}>
              <Typography sx={{ fontWeight: 600, mr: 1 }}>Rule {i + 1}</Typography>
              <Button size="small" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move rule ${i + 1} up`}>
                Up
              </Button>
              <Button
                size="small"
                disabled={i === draft.rules.length - 1}
                onClick={() => move(i, 1)}
                aria-label={`Move rule ${i + 1} down`}
              >
                Down
              </Button>
              <Button
                size="small"
                color="error"
                onClick={() => edit({ rules: draft.rules.filter((_, j) => j !== i) })}
                aria-label={`Remove rule ${i + 1}`}
              >
                Remove
              </Button>
            </Stack>
            <Stack direction={{ xs: "column", sm: "row" }} spacing={1.5} useFlexGap flexWrap="wrap">
              {money(
                `Rule ${i + 1} price`,
                `price_rules[${i}].price_cents`,
                rule.price,
                (v) => setRule(i, { price: v }),
                "The lead's base price",
              )}
              <TextField
                fullWidth={false}
                size="small"
                label={`Rule ${i + 1} sub_id`}
                value={rule.when.sub_id ?? ""}
                onChange={(e) => setWhen(i, { sub_id: e.target.value === "" ? undefined : e.target.value })}
                helperText={err(`price_rules[${i}].when.sub_id`) || "A value ending in - matches as a prefix"}
                error={Boolean(err(`price_rules[${i}].when.sub_id`))}
              />
              <TextField
                fullWidth={false}
                size="small"
                type="number"
                label={`Rule ${i + 1} at least vehicles`}
                value={rule.minVehicles}
                onChange={(e) => setRule(i, { minVehicles: e.target.value })}
                helperText={err(`price_rules[${i}].when.min_vehicles`) || " "}
                error={Boolean(err(`price_rules[${i}].when.min_vehicles`))}
              />
            </Stack>
            <Stack direction={{ xs: "column", sm: "row" }} spacing={1.5} useFlexGap flexWrap="wrap" sx={{ mt: 1 }}>
              {stateList(i, "origin_states", "origin states")}
              {stateList(i, "destination_states", "destination states")}
            </Stack>
            <Stack direction={{ xs: "column", sm: "row" }} spacing={1.5} useFlexGap flexWrap="wrap" sx={{ mt: 1 }}>
              {choice(`Rule ${i + 1} overseas type`, rule.when.overseas_type, OVERSEAS, (v) =>
                setWhen(i, { overseas_type: v || undefined }),
              )}
              {choice(`Rule ${i + 1} ship via`, rule.when.ship_via, SHIP_VIA, (v) =>
                setWhen(i, { ship_via: v || undefined }),
              )}
              {choice(`Rule ${i + 1} vehicle type`, rule.when.vehicle_type, VEHICLES, (v) =>
                setWhen(i, { vehicle_type: v || undefined }),
              )}
              <TextField
                fullWidth={false}
                select
                size="small"
                label={`Rule ${i + 1} vehicles run`}
                value={rule.when.vehicle_run === undefined ? "" : rule.when.vehicle_run ? "yes" : "no"}
                onChange={(e) =>
                  setWhen(i, { vehicle_run: e.target.value === "" ? undefined : e.target.value === "yes" })
                }
                sx={{ minWidth: 210 }}
              >
                <MenuItem value="">Any</MenuItem>
                <MenuItem value="yes">Every vehicle runs</MenuItem>
                <MenuItem value="no">No vehicle runs</MenuItem>
              </TextField>
            </Stack>
            {err(`price_rules[${i}]`) && (
              <Typography variant="body2" color="error" sx={{ mt: 1 }}>
                {err(`price_rules[${i}]`)}
              </Typography>
            )}
          </Box>
        ))}
        <Box>
          <Button
            size="small"
            onClick={() => {
              keys += 1;
              edit({ rules: [...draft.rules, { key: keys, price: draft.defaultPrice, when: {}, minVehicles: "" }] });
            }}
          >
            Add a price rule
          </Button>
        </Box>
        <Typography component="h3" variant="subtitle1">
          Returns
        </Typography>
        <Stack direction={{ xs: "column", sm: "row" }} spacing={2} useFlexGap flexWrap="wrap">
          {integer(
            "Return window (hours)",
            "returns.window_hours",
            draft.windowHours,
            (v) => edit({ windowHours: v }),
            "After acceptance",
          )}
          <TextField
            fullWidth={false}
            label="Most returned (%)"
            value={draft.maxRatePct}
            type="number"
            onChange={(e) => edit({ maxRatePct: e.target.value })}
            helperText={err("returns.max_rate") || "Of a month's billable leads"}
            error={Boolean(err("returns.max_rate"))}
            sx={{ minWidth: 200 }}
          />
          {integer(
            "Contest window (hours)",
            "returns.contest_hours",
            draft.contestHours,
            (v) => edit({ contestHours: v }),
            "To contest a return",
          )}
        </Stack>
        <Stack direction={{ xs: "column", sm: "row" }} spacing={2}>
          <Autocomplete
            multiple
            options={REASONS}
            value={draft.reasons}
            onChange={(_e, value) => edit({ reasons: value })}
            sx={{ flex: 1 }}
            renderInput={(params) => (
              <TextField
                {...params}
                label="Return reasons"
                helperText={err("returns.reasons") || " "}
                error={Boolean(err("returns.reasons"))}
              />
            )}
          />
          <Autocomplete
            multiple
            options={REASONS}
            value={draft.autoApprove}
            onChange={(_e, value) => edit({ autoApprove: value })}
            sx={{ flex: 1 }}
            renderInput={(params) => (
              <TextField
                {...params}
                label="Approved at once"
                helperText={err("returns.auto_approve") || " "}
                error={Boolean(err("returns.auto_approve"))}
              />
            )}
          />
        </Stack>
        {failure && (
          <Alert severity="error" role="alert">
            {failure}
          </Alert>
        )}
        <Stack direction="row" spacing={1}>
          <Button variant="contained" onClick={save} disabled={saving}>
            Save terms
          </Button>
          <Button
            onClick={() => {
              setDraft(draftOf(terms));
              setErrors({});
              setFailure(null);
              setQuote(null);
            }}
          >
            Discard changes
          </Button>
        </Stack>
        <Divider />
        <Box role="group" aria-label="What would this lead earn?">
          <Typography component="h3" variant="subtitle1" gutterBottom>
            What would this lead earn?
          </Typography>
          <Typography variant="body2" gutterBottom>
            A lead priced by the terms as edited above, before they are saved. Nothing is stored.
          </Typography>
          <Stack direction={{ xs: "column", sm: "row" }} spacing={1.5} useFlexGap flexWrap="wrap">
            <TextField
              fullWidth={false}
              size="small"
              label="Origin ZIP"
              value={sample.originZip}
              onChange={(e) => setSample({ ...sample, originZip: e.target.value })}
              helperText={err("origin_zip", quoteErrors) || " "}
              error={Boolean(err("origin_zip", quoteErrors))}
            />
            <TextField
              fullWidth={false}
              size="small"
              label="Destination ZIP"
              value={sample.destinationZip}
              onChange={(e) => setSample({ ...sample, destinationZip: e.target.value })}
              helperText={err("destination_zip", quoteErrors) || " "}
              error={Boolean(err("destination_zip", quoteErrors))}
            />
            <TextField
              fullWidth={false}
              size="small"
              type="number"
              label="Vehicles"
              value={sample.vehicles}
              onChange={(e) => setSample({ ...sample, vehicles: e.target.value })}
              helperText={err("vehicles", quoteErrors) || " "}
              error={Boolean(err("vehicles", quoteErrors))}
            />
            <TextField
              fullWidth={false}
              size="small"
              label="sub_id"
              value={sample.subId}
              onChange={(e) => setSample({ ...sample, subId: e.target.value })}
              helperText={err("sub_id", quoteErrors) || " "}
              error={Boolean(err("sub_id", quoteErrors))}
            />
          </Stack>
          <Stack direction={{ xs: "column", sm: "row" }} spacing={1.5} useFlexGap flexWrap="wrap">
            {[
              ["Overseas type", "overseasType", OVERSEAS],
              ["Ship via", "shipVia", SHIP_VIA],
              ["Vehicle type", "vehicleType", VEHICLES],
            ].map(([label, key, options]) => (
              <TextField
                fullWidth={false}
                key={key as string}
                select
                size="small"
                label={`Lead ${String(label).toLowerCase()}`}
                value={sample[key as "overseasType"]}
                onChange={(e) => setSample({ ...sample, [key as string]: e.target.value })}
                sx={{ minWidth: 200 }}
              >
                {(options as string[]).map((o) => (
                  <MenuItem key={o} value={o}>
                    {o}
                  </MenuItem>
                ))}
              </TextField>
            ))}
            <TextField
              fullWidth={false}
              select
              size="small"
              label="Lead vehicles run"
              value={sample.runs}
              onChange={(e) => setSample({ ...sample, runs: e.target.value as "yes" | "no" })}
              sx={{ minWidth: 200 }}
            >
              <MenuItem value="yes">They run</MenuItem>
              <MenuItem value="no">They do not run</MenuItem>
            </TextField>
          </Stack>
          <Box sx={{ mt: 1 }}>
            <Button variant="outlined" onClick={preview}>
              Price this lead
            </Button>
          </Box>
          {quote && (
            <Alert severity="info" sx={{ mt: 1 }} data-testid="quote-result" role="status">
              This lead would earn <strong>{cents(quote.amount_cents, quote.currency)}</strong>:{" "}
              {quote.rule === "default_price_cents"
                ? "the default price"
                : `rule ${Number(/\d+/.exec(quote.rule)?.[0] ?? 0) + 1}`}{" "}
              {cents(quote.base_cents, quote.currency)}
              {quote.extra_vehicles_cents > 0 &&
                ` plus ${cents(quote.extra_vehicles_cents, quote.currency)} for extra vehicles`}
              , by {quote.draft ? "the terms as edited (not saved)" : `version ${quote.terms_version}`}.
            </Alert>
          )}
          {quoteFailure && (
            <Alert severity="error" sx={{ mt: 1 }}>
              {quoteFailure}
            </Alert>
          )}
        </Box>
      </Stack>
    </Panel>
  );
}
