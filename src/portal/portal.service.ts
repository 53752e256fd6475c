/**
 * What a signed-in portal user may do (docs/portal.md), always on the principal's own provider: the
 * provider id comes from the session, never from the request, so another provider's ids are
 * simply not found (404, the same answer as an id that does not exist). Each operation is the
 * existing service's, called with that provider; changes are audited as `portal:<email>`.
 */
import type { EventListQuery, EventService } from "../events/event.service.ts";
import type { IntakeService } from "../intake/intake.service.ts";
import type { LeadListQuery, LeadService } from "../leads/lead.service.ts";
import type { LeadOwner } from "../leads/lead.ts";
import type { LedgerService, LineQuery } from "../money/ledger.service.ts";
import type { TermsService } from "../money/terms.service.ts";
import type { ProviderService } from "../providers/provider.service.ts";
import type { RequestLogQuery, RequestLogService } from "../request-log/request-log.service.ts";
import { SANDBOX_VALUES } from "../sandbox/sandbox.ts";
import type { StatsQuery, StatsService } from "../stats/stats.service.ts";
import type { WebhookService } from "../webhooks/webhook.service.ts";
import type { PortalUserService } from "./portal-user.service.ts";
import { type PortalPrincipal, secondFactorFirst } from "./portal-user.ts";

export interface PortalServiceDeps {
  readonly users: PortalUserService;
  readonly providers: ProviderService;
  readonly leads: LeadService;
  readonly events: EventService;
  readonly requestLog: RequestLogService;
  readonly stats: StatsService;
  readonly intake: IntakeService;
  readonly webhooks: WebhookService;
  readonly ledger: LedgerService;
  readonly terms: TermsService;
}

export type PortalService = ReturnType<typeof createPortalService>;

/** How long the previous test key keeps working after the provider's people rotate it. */
export const TEST_KEY_ROTATION_GRACE_SECONDS = 3600;

const actorOf = (p: PortalPrincipal) => `portal:${p.email}`;
const ownerOf = (p: PortalPrincipal, livemode: boolean | undefined): LeadOwner => ({
  providerId: p.providerId,
  livemode: livemode ?? true,
});

/**
 * While PORTAL_REQUIRE_2FA waits for this user's second factor, only enrolment and sign-out
 * answer. The REST gate refuses such a user on every other path first (edge/surfaces.ts); this
 * holds the rule for every other caller of these use cases too.
 */
function open(p: PortalPrincipal): PortalPrincipal {
  if (p.mustEnrolSecondFactor) throw secondFactorFirst();
  return p;
}

export function createPortalService(deps: PortalServiceDeps) {
  const { providers, webhooks } = deps;

  /** The provider record (name, limits, key summaries) without revealing any key. */
  async function providerOf(p: PortalPrincipal) {
    return providers.summary(p.providerId);
  }

  return {
    /** The user, its provider's name and limits, and its keys as masks. */
    async me(p: PortalPrincipal) {
      const [user, provider] = await Promise.all([deps.users.me(p), providerOf(p)]);
      return { user, provider, secondFactorRequired: deps.users.requireSecondFactor };
    },

    listLeads: (p: PortalPrincipal, livemode: boolean | undefined, q: LeadListQuery) =>
      deps.leads.list(ownerOf(open(p), livemode), q),
    getLead: (p: PortalPrincipal, livemode: boolean | undefined, externalId: string) =>
      deps.leads.get(ownerOf(open(p), livemode), externalId),
    listEvents: (p: PortalPrincipal, livemode: boolean | undefined, q: EventListQuery) =>
      deps.events.list(ownerOf(open(p), livemode), q),
    listRequests: (p: PortalPrincipal, livemode: boolean | undefined, q: RequestLogQuery) =>
      deps.requestLog.list(ownerOf(open(p), livemode), q),
    getRequest: (p: PortalPrincipal, livemode: boolean | undefined, requestId: string) =>
      deps.requestLog.get(ownerOf(open(p), livemode), requestId),
    stats: (p: PortalPrincipal, livemode: boolean | undefined, q: StatsQuery) =>
      deps.stats.forProvider(ownerOf(open(p), livemode), q),
    intakeRules: (p: PortalPrincipal, livemode: boolean | undefined) =>
      deps.intake.published(ownerOf(open(p), livemode)),

    // ---- money: the provider's own book of the mode, as its key of that mode reads it ----
    balance: (p: PortalPrincipal, livemode: boolean | undefined) => deps.ledger.balance(ownerOf(open(p), livemode)),
    lines: (p: PortalPrincipal, livemode: boolean | undefined, q: LineQuery) =>
      deps.ledger.lines(ownerOf(open(p), livemode), q),
    statements: (
      p: PortalPrincipal,
      livemode: boolean | undefined,
      q: { pageSize?: number | undefined; pageToken?: string | undefined },
    ) => deps.ledger.statements(ownerOf(open(p), livemode), q),
    /** The book whose statements to read (for the statement's JSON, CSV and PDF). */
    statementBook: (p: PortalPrincipal, livemode: boolean | undefined) => ownerOf(open(p), livemode),
    /** What the book's leads earned per business day. */
    earnings: (p: PortalPrincipal, livemode: boolean | undefined, days: number | undefined) =>
      deps.ledger.earnings(ownerOf(open(p), livemode), days),
    terms: (p: PortalPrincipal) => deps.terms.published(ownerOf(open(p), true)),
    quote: (p: PortalPrincipal, livemode: boolean | undefined, lead: unknown) =>
      deps.terms.quote(ownerOf(open(p), livemode), lead),

    /** The endpoint with its signing secret (an audited view). */
    webhook: (p: PortalPrincipal) => webhooks.get(actorOf(open(p)), p.providerId),
    /**
     * Sets the webhook URL (the administrators' checks: https in production, no private addresses)
     * or clears it (null), and the event types it receives when `eventTypes` is sent (null: all).
     */
    async setWebhookUrl(p: PortalPrincipal, url: unknown, eventTypes?: unknown) {
      await providers.update(actorOf(open(p)), p.providerId, {
        webhook_url: url ?? null,
        ...(eventTypes !== undefined && { webhook_event_types: eventTypes }),
      });
      return webhooks.get(actorOf(open(p)), p.providerId);
    },
    rotateWebhookSecret: (p: PortalPrincipal, overlapSeconds: number | undefined) =>
      webhooks.rotateSecret(actorOf(open(p)), p.providerId, overlapSeconds),
    sendWebhookTest: (p: PortalPrincipal) => webhooks.sendTest(actorOf(open(p)), p.providerId),
    listDeliveries: (p: PortalPrincipal, q: { pageSize?: number | undefined; pageToken?: string | undefined }) =>
      webhooks.listDeliveries(open(p).providerId, q),
    getDelivery: (p: PortalPrincipal, deliveryId: string) => webhooks.getDelivery(open(p).providerId, deliveryId),
    replayDelivery: (p: PortalPrincipal, deliveryId: string) =>
      webhooks.replay(actorOf(open(p)), p.providerId, deliveryId),

    /** The keys as masks with their creation and last use (issuing and viewing live keys stays with administrators). */
    async keys(p: PortalPrincipal) {
      const provider = await providerOf(open(p));
      return { live: provider.apiKey, test: provider.testApiKey, sandboxValues: SANDBOX_VALUES };
    },
    /** The current test key in plain text (an audited view), or null when none was issued. */
    async revealTestKey(p: PortalPrincipal) {
      const { apiKey } = await providers.revealKey(actorOf(open(p)), p.providerId, "test");
      const key = apiKey === null ? null : (await providerOf(p)).testApiKey;
      return { apiKey, createdAt: key?.createdAt ?? null, previousKeyExpiresAt: key?.previousKeyExpiresAt ?? null };
    },
    /** Issues a test key; a previous one keeps working for an hour, so a running integration can switch. */
    issueTestKey: (p: PortalPrincipal) =>
      providers.generateKey(actorOf(open(p)), p.providerId, {
        mode: "test",
        previousKeyGraceSeconds: TEST_KEY_ROTATION_GRACE_SECONDS,
      }),
  };
}
