/**
 * The contract's types under their schema names, for the provider's operations and the webhooks:
 * every schema reachable from a provider-key operation or a webhook event has an alias here (the
 * contract check in the service's tests fails when one is missing). The aliases point into
 * `generated/schema.ts`, which `make generate` writes from openapi/openapi.yaml.
 */
import type { components, operations, webhooks } from "./generated/schema.ts";

type S = components["schemas"];

// Leads
export type LeadCreate = S["LeadCreate"];
export type LeadCreateBase = S["LeadCreateBase"];
export type LeadCreated = S["LeadCreated"];
export type Lead = S["Lead"];
export type LeadList = S["LeadList"];
export type LeadState = S["LeadState"];
export type LeadPrice = S["LeadPrice"];
export type LeadReturnStatus = S["LeadReturnStatus"];
export type VehicleInput = S["VehicleInput"];
export type Vehicle = S["Vehicle"];
export type VehicleType = S["VehicleType"];
export type OverseasType = S["OverseasType"];
export type ShipVia = S["ShipVia"];
export type Zip = S["Zip"];
export type Location = S["Location"];
export type StateChange = S["StateChange"];
export type Consent = S["Consent"];
export type LeadConsent = S["LeadConsent"];
export type Duplicate = S["Duplicate"];
export type Warning = S["Warning"];

// Errors
export type FieldError = S["FieldError"];
export type { Problem, ProblemCode } from "./errors.ts";

// Events
export type LeadEvent = S["LeadEvent"];
export type EventList = S["EventList"];

// Intake rules
export type PublishedIntakeRules = S["PublishedIntakeRules"];
export type VersionedIntakeRules = S["VersionedIntakeRules"];
export type IntakeRules = S["IntakeRules"];
export type IntakeRuleDescription = S["IntakeRuleDescription"];
export type Opening = S["Opening"];
export type CapUsage = S["CapUsage"];

// Request log and stats
export type RequestLogEntry = S["RequestLogEntry"];
export type RequestLogList = S["RequestLogList"];
export type Stats = S["Stats"];
export type StatsRow = S["StatsRow"];
export type StatsOutcomes = S["StatsOutcomes"];

// Money
export type PublishedTerms = S["PublishedTerms"];
export type VersionedTerms = S["VersionedTerms"];
export type PriceRule = S["PriceRule"];
export type PriceRuleWhen = S["PriceRuleWhen"];
export type ReturnsPolicy = S["ReturnsPolicy"];
export type Quote = S["Quote"];
export type Balance = S["Balance"];
export type BalanceTransaction = S["BalanceTransaction"];
export type BalanceTransactionList = S["BalanceTransactionList"];
export type TransactionType = S["TransactionType"];
export type LedgerLead = S["LedgerLead"];
export type Payout = S["Payout"];
export type Adjustment = S["Adjustment"];
export type Statement = S["Statement"];
export type StatementAccount = S["StatementAccount"];
export type StatementTotals = S["StatementTotals"];
export type StatementSummary = S["StatementSummary"];
export type StatementList = S["StatementList"];

// Returns
export type ProviderReturn = S["ProviderReturn"];
export type ProviderReturnList = S["ProviderReturnList"];
export type ReturnContest = S["ReturnContest"];
export type ReturnContestShown = S["ReturnContestShown"];
export type ReturnEvidence = S["ReturnEvidence"];
export type ReturnReason = S["ReturnReason"];

// Webhooks
export type WebhookLeadEvent = S["WebhookLeadEvent"];
export type WebhookIntakeRulesEvent = S["WebhookIntakeRulesEvent"];
export type WebhookTestEvent = S["WebhookTestEvent"];
export type WebhookMoneyEvent = S["WebhookMoneyEvent"];
export type WebhookReturnEvent = S["WebhookReturnEvent"];
/** Any event a webhook delivers (narrow on `type`). */
export type WebhookEvent = {
  [Event in keyof webhooks]: NonNullable<webhooks[Event]["post"]>["requestBody"]["content"]["application/json"];
}[keyof webhooks];
/** Every event type a webhook can carry. */
export type WebhookEventType = keyof webhooks;

// The query parameters of the lists and reads
type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;
export type ListLeadsParams = Query<"listLeads">;
export type ListEventsParams = Query<"listEvents">;
export type ListRequestsParams = Query<"listRequests">;
export type GetStatsParams = Query<"getStats">;
export type ListBalanceTransactionsParams = Query<"listBalanceTransactions">;
export type ListStatementsParams = Query<"listStatements">;
export type ListReturnsParams = Query<"listOwnReturns">;
