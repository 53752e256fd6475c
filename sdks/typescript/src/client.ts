/**
 * The client: `new LeadProvider({ apiKey })`, with one object per part of the Public API (leads,
 * events, requests, stats, intakeRules, terms, balance, balanceTransactions, statements, returns)
 * and webhook verification. A thin layer over openapi-fetch: every path, parameter and body is
 * typed by the contract (generated/schema.ts); this layer adds retries, errors as classes, paging
 * and the recovery of a create whose first answer was lost.
 */
import createClient, { type Client } from "openapi-fetch";
import { DuplicateLeadError } from "./errors.ts";
import type { paths } from "./generated/schema.ts";
import { type Attempted, type AttemptInit, attempt, type Recover, type RetryEvent, type RetryPolicy } from "./http.ts";
import type {
  Balance,
  BalanceTransaction,
  BalanceTransactionList,
  EventList,
  GetStatsParams,
  Lead,
  LeadCreate,
  LeadCreated,
  LeadEvent,
  LeadList,
  ListBalanceTransactionsParams,
  ListEventsParams,
  ListLeadsParams,
  ListRequestsParams,
  ListReturnsParams,
  ListStatementsParams,
  ProviderReturn,
  ProviderReturnList,
  PublishedIntakeRules,
  PublishedTerms,
  Quote,
  RequestLogEntry,
  RequestLogList,
  ReturnContest,
  Statement,
  StatementList,
  StatementSummary,
  Stats,
} from "./types.ts";
import { Webhooks } from "./webhooks.ts";

/** This package's version, sent in the User-Agent. */
export const VERSION = "0.1.0";

export interface LeadProviderOptions {
  /** `lp_live_…` or `lp_test_…` (test mode: see `livemode`). Keep it out of source code and logs. */
  apiKey: string;
  /** The service's origin, e.g. `https://leads.example.com`. Default: `http://localhost:8080`. */
  baseUrl?: string;
  /** Time for one attempt, from sending to the whole answer read. Default 30 000 ms. */
  timeoutMs?: number;
  /** Attempts after the first, on network errors, time-outs, 5xx and 429 rate_limited. Default 2. */
  maxRetries?: number;
  /** The longest `Retry-After` the client sleeps through before trying again; a longer one is thrown at once. Default 60 000 ms. */
  maxRetryWaitMs?: number;
  /** Also wait out `cap_reached` and `intake_closed` (within maxRetryWaitMs). Default false: thrown at once. */
  retryIntakeRefusals?: boolean;
  /** Called before each retry (attempt, delay, reason, request id): for logging. */
  onRetry?: (event: RetryEvent) => void;
  /** A fetch to use instead of the global one (a proxy agent, instrumentation). */
  fetch?: (request: Request) => Promise<Response>;
}

/** Per call: the caller's abort signal (an abort is never retried). */
export interface CallOptions {
  signal?: AbortSignal;
}

const KEY = /^lp_(live|test)_[A-Za-z0-9]+$/;

function positive(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
    throw new TypeError(`${name} must be a number of at least ${min}, got ${String(value)}`);
  }
  return value;
}

function nonEmpty(name: string, value: unknown): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`${name} must be a non-empty string`);
  return value;
}

/** The same submission as a stored lead: the fields the service stores exactly as sent. */
function sameSubmission(sent: LeadCreate, stored: Lead): boolean {
  const fields = [
    "first_name",
    "last_name",
    "email",
    "phone_number",
    "estimated_ship_date",
    "overseas_type",
    "ship_via",
  ] as const;
  return (
    fields.every((f) => sent[f] === stored[f]) &&
    Array.isArray(sent.vehicles) &&
    sent.vehicles.length === stored.vehicles.length
  );
}

type Raw = Client<paths>;

/** The shared machinery of every resource. */
class Core {
  readonly raw: Raw;
  readonly policy: RetryPolicy;
  constructor(raw: Raw, policy: RetryPolicy) {
    this.raw = raw;
    this.policy = policy;
  }
  run<T>(send: (init: AttemptInit) => Promise<Attempted<T>>, options: CallOptions = {}, recover?: Recover<T>) {
    return attempt(send, this.policy, { signal: options.signal, recover });
  }
}

/** Every item of a cursor-paged list, page after page. */
async function* pages<Item, Params extends { page_token?: string }>(
  list: (params: Params, options?: CallOptions) => Promise<{ results: Item[]; next_page_token: string | null }>,
  params: Params,
  options?: CallOptions,
): AsyncGenerator<Item, void, undefined> {
  let token = params.page_token;
  for (;;) {
    const page = await list({ ...params, ...(token !== undefined && { page_token: token }) }, options);
    yield* page.results;
    if (page.next_page_token === null) return;
    token = page.next_page_token;
  }
}

export class Leads {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }

  /**
   * Submits a lead. Safe to retry: `external_id` is the idempotency key, so when an attempt gets
   * no answer (or a 5xx) and a later attempt is told `duplicate_external_id`, the lead stored by
   * the earlier attempt is read back and returned (its `warnings` are then empty: they were in
   * the lost answer), provided it holds this submission; a different stored lead is a
   * DuplicateLeadError.
   */
  async create(body: LeadCreate, options?: CallOptions): Promise<LeadCreated> {
    if (typeof body !== "object" || body === null) throw new TypeError("create needs the lead as an object");
    const recover: Recover<LeadCreated> = async (error) => {
      if (!(error instanceof DuplicateLeadError) || error.code !== "duplicate_external_id") return undefined;
      const stored = await this.get(body.external_id, options).catch(() => undefined);
      return stored && sameSubmission(body, stored) ? { ...stored, warnings: [] } : undefined;
    };
    return this.#core.run((init) => this.#core.raw.POST("/api/v1/public/leads/", { body, ...init }), options, recover);
  }

  /** The provider's lead with this external_id (in the key's mode). */
  async get(externalId: string, options?: CallOptions): Promise<Lead> {
    const external_id = nonEmpty("externalId", externalId);
    return this.#core.run(
      (init) =>
        this.#core.raw.GET("/api/v1/public/leads/{external_id}/", { params: { path: { external_id } }, ...init }),
      options,
    );
  }

  /** One page of the provider's leads, newest first (`state`, `updated_after`, `page_size`, `page_token`). */
  list(params: ListLeadsParams = {}, options?: CallOptions): Promise<LeadList> {
    return this.#core.run(
      (init) => this.#core.raw.GET("/api/v1/public/leads/", { params: { query: params }, ...init }),
      options,
    );
  }

  /** Every lead the filters select, page after page: `for await (const lead of client.leads.listAll())`. */
  listAll(params: ListLeadsParams = {}, options?: CallOptions): AsyncGenerator<Lead, void, undefined> {
    return pages((p, o) => this.list(p, o), params, options);
  }
}

export class Events {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** One page of what happened to the provider's leads, newest first (`type`, `created_after`). */
  list(params: ListEventsParams = {}, options?: CallOptions): Promise<EventList> {
    return this.#core.run(
      (init) => this.#core.raw.GET("/api/v1/public/events/", { params: { query: params }, ...init }),
      options,
    );
  }
  listAll(params: ListEventsParams = {}, options?: CallOptions): AsyncGenerator<LeadEvent, void, undefined> {
    return pages((p, o) => this.list(p, o), params, options);
  }
}

export class Requests {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** One page of the request log: what happened to each request of the key's mode. */
  list(params: ListRequestsParams = {}, options?: CallOptions): Promise<RequestLogList> {
    return this.#core.run(
      (init) => this.#core.raw.GET("/api/v1/public/requests/", { params: { query: params }, ...init }),
      options,
    );
  }
  listAll(params: ListRequestsParams = {}, options?: CallOptions): AsyncGenerator<RequestLogEntry, void, undefined> {
    return pages((p, o) => this.list(p, o), params, options);
  }
  /** One request by its id (an error's `requestId`). */
  async get(requestId: string, options?: CallOptions): Promise<RequestLogEntry> {
    const request_id = nonEmpty("requestId", requestId);
    return this.#core.run(
      (init) =>
        this.#core.raw.GET("/api/v1/public/requests/{request_id}/", { params: { path: { request_id } }, ...init }),
      options,
    );
  }
}

export class StatsResource {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** What became of the provider's leads per period (`from`, `to`, `granularity`, `group_by`). */
  get(params: GetStatsParams = {}, options?: CallOptions): Promise<Stats> {
    return this.#core.run(
      (init) =>
        this.#core.raw.GET("/api/v1/public/stats/", { params: { query: params }, ...init }) as Promise<
          Attempted<Stats>
        >,
      options,
    );
  }
  /** The same as CSV text. */
  getCsv(params: GetStatsParams = {}, options?: CallOptions): Promise<string> {
    return this.#core.run(
      (init) =>
        this.#core.raw.GET("/api/v1/public/stats/", {
          params: { query: params },
          parseAs: "text",
          ...init,
          headers: { ...init.headers, Accept: "text/csv" },
        }),
      options,
    );
  }
}

export class IntakeRulesResource {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** The intake rules as they apply to this key now: caps and their use, schedule, criteria. */
  get(options?: CallOptions): Promise<PublishedIntakeRules> {
    return this.#core.run((init) => this.#core.raw.GET("/api/v1/public/intake_rules/", init), options);
  }
}

export class Terms {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** The provider's commercial terms (prices, settlement days, returns policy). */
  get(options?: CallOptions): Promise<PublishedTerms> {
    return this.#core.run((init) => this.#core.raw.GET("/api/v1/public/terms/", init), options);
  }
  /** What this lead would earn if it were sent now; nothing is stored. */
  quote(body: LeadCreate, options?: CallOptions): Promise<Quote> {
    return this.#core.run((init) => this.#core.raw.POST("/api/v1/public/terms/quote/", { body, ...init }), options);
  }
}

export class BalanceResource {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** Pending, available and paid out, in cents. */
  get(options?: CallOptions): Promise<Balance> {
    return this.#core.run((init) => this.#core.raw.GET("/api/v1/public/balance/", init), options);
  }
}

export class BalanceTransactions {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** One page of the ledger's lines: purchases, settlements, returns, adjustments, payouts. */
  list(params: ListBalanceTransactionsParams = {}, options?: CallOptions): Promise<BalanceTransactionList> {
    return this.#core.run(
      (init) => this.#core.raw.GET("/api/v1/public/balance_transactions/", { params: { query: params }, ...init }),
      options,
    );
  }
  listAll(
    params: ListBalanceTransactionsParams = {},
    options?: CallOptions,
  ): AsyncGenerator<BalanceTransaction, void, undefined> {
    return pages((p, o) => this.list(p, o), params, options);
  }
}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export class Statements {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** One page of the provider's monthly statements, newest first. */
  list(params: ListStatementsParams = {}, options?: CallOptions): Promise<StatementList> {
    return this.#core.run(
      (init) => this.#core.raw.GET("/api/v1/public/statements/", { params: { query: params }, ...init }),
      options,
    );
  }
  listAll(params: ListStatementsParams = {}, options?: CallOptions): AsyncGenerator<StatementSummary, void, undefined> {
    return pages((p, o) => this.list(p, o), params, options);
  }
  /** One month's statement (`YYYY-MM`). */
  async get(month: string, options?: CallOptions): Promise<Statement> {
    const path = { month: Statements.#month(month) };
    return this.#core.run(
      (init) =>
        this.#core.raw.GET("/api/v1/public/statements/{month}/", {
          params: { path },
          ...init,
        }) as Promise<Attempted<Statement>>,
      options,
    );
  }
  /** One month's lines as CSV text. */
  async getCsv(month: string, options?: CallOptions): Promise<string> {
    const path = { month: Statements.#month(month) };
    return this.#core.run(
      (init) =>
        this.#core.raw.GET("/api/v1/public/statements/{month}/", {
          params: { path, query: { format: "csv" } },
          parseAs: "text",
          ...init,
        }),
      options,
    );
  }
  /** One month's statement as a PDF. */
  async getPdf(month: string, options?: CallOptions): Promise<Uint8Array> {
    const path = { month: Statements.#month(month) };
    const buffer = await this.#core.run(
      (init) =>
        this.#core.raw.GET("/api/v1/public/statements/{month}/", {
          params: { path, query: { format: "pdf" } },
          parseAs: "arrayBuffer",
          ...init,
        }),
      options,
    );
    return new Uint8Array(buffer);
  }
  static #month(month: string): string {
    if (typeof month !== "string" || !MONTH.test(month)) throw new TypeError(`month must be YYYY-MM, got ${month}`);
    return month;
  }
}

export class Returns {
  readonly #core: Core;
  constructor(core: Core) {
    this.#core = core;
  }
  /** One page of the provider's returns (`state`, `reason`, `created_after`, `created_before`). */
  list(params: ListReturnsParams = {}, options?: CallOptions): Promise<ProviderReturnList> {
    return this.#core.run(
      (init) => this.#core.raw.GET("/api/v1/public/returns/", { params: { query: params }, ...init }),
      options,
    );
  }
  listAll(params: ListReturnsParams = {}, options?: CallOptions): AsyncGenerator<ProviderReturn, void, undefined> {
    return pages((p, o) => this.list(p, o), params, options);
  }
  /** Contests the return of this lead, once, before its deadline, with a statement and https evidence links. */
  async contest(externalId: string, body: ReturnContest, options?: CallOptions): Promise<ProviderReturn> {
    const external_id = nonEmpty("externalId", externalId);
    return this.#core.run(
      (init) =>
        this.#core.raw.POST("/api/v1/public/leads/{external_id}/return/contest/", {
          params: { path: { external_id } },
          body,
          ...init,
        }),
      options,
    );
  }
}

export class LeadProvider {
  /** true for a live key (`lp_live_…`), false for a test key (`lp_test_…`: test leads, test money). */
  readonly livemode: boolean;
  readonly baseUrl: string;
  readonly leads: Leads;
  readonly events: Events;
  readonly requests: Requests;
  readonly stats: StatsResource;
  readonly intakeRules: IntakeRulesResource;
  readonly terms: Terms;
  readonly balance: BalanceResource;
  readonly balanceTransactions: BalanceTransactions;
  readonly statements: Statements;
  readonly returns: Returns;
  readonly webhooks: Webhooks;
  /** openapi-fetch's client, for a call this layer does not wrap (no retries, no error classes). */
  readonly raw: Raw;

  constructor(options: LeadProviderOptions) {
    if (typeof options !== "object" || options === null) throw new TypeError("LeadProvider needs { apiKey }");
    const key = options.apiKey;
    if (typeof key !== "string" || !KEY.test(key)) {
      // Never echo the value: it may be a real key with a typo.
      throw new TypeError("apiKey must be a provider API key: lp_live_… or lp_test_… followed by letters and digits");
    }
    this.livemode = key.startsWith("lp_live_");
    const base = options.baseUrl ?? "http://localhost:8080";
    let url: URL;
    try {
      url = new URL(base);
    } catch {
      throw new TypeError(`baseUrl must be an absolute http(s) URL, got ${base}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`baseUrl must be an absolute http(s) URL, got ${base}`);
    }
    this.baseUrl = base.replace(/\/+$/, "");
    const maxRetries = positive("maxRetries", options.maxRetries, 2, 0);
    if (!Number.isInteger(maxRetries)) throw new TypeError(`maxRetries must be a whole number, got ${maxRetries}`);
    const policy: RetryPolicy = {
      maxRetries,
      timeoutMs: positive("timeoutMs", options.timeoutMs, 30_000, 1),
      maxRetryWaitMs: positive("maxRetryWaitMs", options.maxRetryWaitMs, 60_000, 0),
      retryIntakeRefusals: options.retryIntakeRefusals ?? false,
      onRetry: options.onRetry,
    };
    const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.raw = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: fetchImpl,
      headers: { Authorization: `Bearer ${key}`, "User-Agent": `lead-provider-sdk-typescript/${VERSION}` },
    });
    const core = new Core(this.raw, policy);
    this.leads = new Leads(core);
    this.events = new Events(core);
    this.requests = new Requests(core);
    this.stats = new StatsResource(core);
    this.intakeRules = new IntakeRulesResource(core);
    this.terms = new Terms(core);
    this.balance = new BalanceResource(core);
    this.balanceTransactions = new BalanceTransactions(core);
    this.statements = new Statements(core);
    this.returns = new Returns(core);
    this.webhooks = new Webhooks();
  }
}
