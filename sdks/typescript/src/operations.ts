/**
 * Which method calls each provider-key operation of the contract. The service's contract check
 * (test/contract/sdk-coverage.test.ts) fails when an operation of openapi.yaml secured by
 * ProviderApiKey is missing here, when a row names a path or method the contract does not have,
 * or when the method does not exist on a client; a list's `listAll` pages through it.
 */
export interface OperationRow {
  /** `METHOD /path/` as in openapi.yaml. */
  readonly http: string;
  /** The method on a `LeadProvider`, e.g. `leads.create`. */
  readonly method: string;
  /** For a cursor-paged list: the method that iterates every page. */
  readonly iterate?: string;
}

export const OPERATIONS: Readonly<Record<string, OperationRow>> = {
  createLead: { http: "POST /api/v1/public/leads/", method: "leads.create" },
  listLeads: { http: "GET /api/v1/public/leads/", method: "leads.list", iterate: "leads.listAll" },
  getLead: { http: "GET /api/v1/public/leads/{external_id}/", method: "leads.get" },
  listEvents: { http: "GET /api/v1/public/events/", method: "events.list", iterate: "events.listAll" },
  listRequests: { http: "GET /api/v1/public/requests/", method: "requests.list", iterate: "requests.listAll" },
  getRequest: { http: "GET /api/v1/public/requests/{request_id}/", method: "requests.get" },
  getStats: { http: "GET /api/v1/public/stats/", method: "stats.get" },
  getPublishedIntakeRules: { http: "GET /api/v1/public/intake_rules/", method: "intakeRules.get" },
  getPublishedTerms: { http: "GET /api/v1/public/terms/", method: "terms.get" },
  quoteLead: { http: "POST /api/v1/public/terms/quote/", method: "terms.quote" },
  getBalance: { http: "GET /api/v1/public/balance/", method: "balance.get" },
  listBalanceTransactions: {
    http: "GET /api/v1/public/balance_transactions/",
    method: "balanceTransactions.list",
    iterate: "balanceTransactions.listAll",
  },
  listStatements: { http: "GET /api/v1/public/statements/", method: "statements.list", iterate: "statements.listAll" },
  getStatement: { http: "GET /api/v1/public/statements/{month}/", method: "statements.get" },
  listOwnReturns: { http: "GET /api/v1/public/returns/", method: "returns.list", iterate: "returns.listAll" },
  contestReturn: { http: "POST /api/v1/public/leads/{external_id}/return/contest/", method: "returns.contest" },
};
