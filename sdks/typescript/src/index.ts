/**
 * @lead-provider/sdk: a typed client of the Lead Provider API for providers.
 *
 *   import { LeadProvider, ValidationError } from "@lead-provider/sdk";
 *   const client = new LeadProvider({ apiKey: process.env.LEAD_PROVIDER_API_KEY });
 *   const lead = await client.leads.create({ external_id: "crm-48213", … });
 */
export {
  BalanceResource,
  BalanceTransactions,
  type CallOptions,
  Events,
  IntakeRulesResource,
  LeadProvider,
  type LeadProviderOptions,
  Leads,
  Requests,
  Returns,
  Statements,
  StatsResource,
  Terms,
  VERSION,
} from "./client.ts";
export {
  ApiError,
  AuthenticationError,
  CapReachedError,
  ConflictError,
  ConnectionError,
  DuplicateLeadError,
  ERROR_CLASSES,
  IntakeClosedError,
  IntakePausedError,
  LeadProviderError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  ValidationError,
  WebhookVerificationError,
} from "./errors.ts";
export type { components, operations, paths, webhooks } from "./generated/schema.ts";
export { BACKOFF, type RetryEvent, type RetryReason } from "./http.ts";
export { OPERATIONS, type OperationRow } from "./operations.ts";
export type * from "./types.ts";
export { type WebhookHeaders, Webhooks } from "./webhooks.ts";
