/**
 * The provider portal over REST (docs/portal.md): `/api/v1/portal/…` for a signed-in portal user
 * (session cookie, see edge/portal-cookie.ts and the surface table), and the administrators'
 * `/api/v1/lead_providers/{id}/portal_users/…`. JSON ↔ the portal services; each answer reuses the
 * Public API's and the Management API's mappings, so a lead reads the same everywhere.
 */
import { type Request, Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import type { ClientAddress } from "../edge/client-address.ts";
import { clearedPortalCookie, portalCookie, portalSessionToken } from "../edge/portal-cookie.ts";
import type { FieldViolation } from "../errors.ts";
import { eventJson } from "../events/event.rest.ts";
import { publishedJson } from "../intake/intake.rest.ts";
import { leadJson } from "../leads/lead.rest.ts";
import type { LedgerService } from "../money/ledger.service.ts";
import {
  balanceJson,
  lineJson,
  lineQueryOf,
  perDayJson,
  publishedTermsJson,
  quoteJson,
  sendStatement,
  statementReader,
  statementSummaryJson,
} from "../money/money.rest.ts";
import { keyJson, PROVIDERS_PATH } from "../providers/provider.rest.ts";
import { requestEntryJson, requestLogQueryOf } from "../request-log/request-log.rest.ts";
import type { RestFeature } from "../rest/feature.ts";
import { cursorPageJson } from "../rest/links.ts";
import { actorOf as actor, operation, portalOf } from "../rest/typed.ts";
import { sendStats, statsQueryOf } from "../stats/stats.rest.ts";
import {
  deliveryDetailJson,
  deliveryJson,
  deliveryPageJson,
  endpointJson,
  rotatedSecretJson,
  testResultJson,
} from "../webhooks/webhook.rest.ts";
import type { PortalService } from "./portal.service.ts";
import { asAdmin } from "./portal-team.service.ts";
import type { Invite, PortalUserService } from "./portal-user.service.ts";
import type { PortalUser } from "./portal-user.ts";

export const PORTAL_PATH = "/api/v1/portal/";

type Json = components["schemas"];
const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const date = (s: string | undefined) => (s === undefined ? undefined : new Date(s));
/** `mode=test` reads test-mode data; live is the default. */
const livemodeOf = (mode: string | undefined) => mode !== "test";

export function portalUserJson(u: PortalUser): Json["PortalUser"] {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    status: u.status,
    role: u.role,
    second_factor: u.secondFactor,
    last_sign_in_at: iso(u.lastSignInAt),
    invite_expires_at: iso(u.inviteExpiresAt),
    created_at: u.createdAt.toISOString(),
  };
}

function inviteJson(i: Invite): Json["PortalInviteIssued"] {
  return {
    user: portalUserJson(i.user),
    invite_url: i.inviteUrl,
    invite_expires_at: i.inviteExpiresAt.toISOString(),
    emailed: i.emailed,
  };
}

/** Where an invite link points: PUBLIC_BASE_URL, else the origin the administrator's request came to. */
function baseUrlOf(req: Request, publicBaseUrl: string | undefined): string {
  return publicBaseUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;
}

export function portalRoutes(
  portal: PortalService,
  users: PortalUserService,
  options: {
    clientAddress: ClientAddress;
    publicBaseUrl?: string | undefined;
    now?: () => Date;
    /** The ledger a statement's CSV and PDF are read from (of the session's own book only). */
    ledger: LedgerService;
    /** A quoted lead's violations, as a create names them (the wording of a schema rejection). */
    quoteViolations: (body: unknown) => readonly FieldViolation[];
  },
): RestFeature {
  const { publicBaseUrl } = options;
  const now = options.now ?? (() => new Date());
  const router = Router();
  const P = PORTAL_PATH;

  // ---- signing in ----
  router.post(
    `${P}sign_in/`,
    operation("portalSignIn", async (req, res) => {
      const clientIp = options.clientAddress(req);
      const session = await users.signIn(req.body, clientIp, portalSessionToken(req.get("cookie")));
      res.setHeader("Set-Cookie", portalCookie(session.token, session.expiresAt, now()));
      res.json({ user: portalUserJson(session.user), expires_at: session.expiresAt.toISOString() });
    }),
  );
  router.post(
    `${P}sign_out/`,
    operation("portalSignOut", async (req, res) => {
      await users.signOut(portalSessionToken(req.get("cookie")));
      res.setHeader("Set-Cookie", clearedPortalCookie());
      res.status(204).end();
    }),
  );
  router.post(
    `${P}invite/`,
    operation("inspectPortalInvite", async (req, res) => {
      const i = await users.inspectInvite(req.body, options.clientAddress(req));
      res.json({
        email: i.email,
        name: i.name,
        provider_name: i.providerName,
        expires_at: i.expiresAt.toISOString(),
        second_factor_required: i.secondFactorRequired,
      });
    }),
  );
  router.post(
    `${P}invite/accept/`,
    operation("acceptPortalInvite", async (req, res) => {
      res.json(portalUserJson(await users.acceptInvite(req.body, options.clientAddress(req))));
    }),
  );

  // ---- a forgotten password (with SMTP_URL) ----
  router.get(
    `${P}password_reset/`,
    operation("getPortalPasswordReset", async (_req, res) => {
      res.json({ available: users.passwordResetAvailable });
    }),
  );
  router.post(
    `${P}password_reset/`,
    operation("requestPortalPasswordReset", async (req, res) => {
      const base = baseUrlOf(req, publicBaseUrl);
      const message = await users.requestPasswordReset(req.body, options.clientAddress(req), base);
      res.status(202).json({ message });
    }),
  );
  router.post(
    `${P}password_reset/confirm/`,
    operation("confirmPortalPasswordReset", async (req, res) => {
      res.json(portalUserJson(await users.confirmPasswordReset(req.body, options.clientAddress(req))));
    }),
  );

  // ---- the signed-in user ----
  router.get(
    `${P}me/`,
    operation("getPortalMe", async (_req, res) => {
      const me = await portal.me(portalOf(res));
      res.json({
        user: portalUserJson(me.user),
        provider: {
          name: me.provider.name,
          rate_limit_per_minute: me.provider.rateLimitPerMinute,
          rate_limit_per_day: me.provider.rateLimitPerDay,
        },
        second_factor_required: me.secondFactorRequired,
      });
    }),
  );
  router.post(
    `${P}me/second_factor/`,
    operation("startPortalSecondFactor", async (_req, res) => {
      const setup = await users.startSecondFactor(portalOf(res));
      res.json({ secret: setup.secret, otpauth_uri: setup.uri });
    }),
  );
  router.post(
    `${P}me/second_factor/confirm/`,
    operation("confirmPortalSecondFactor", async (req, res) => {
      res.json(portalUserJson(await users.confirmSecondFactor(portalOf(res), req.body)));
    }),
  );

  router.post(
    `${P}me/password/`,
    operation("changePortalPassword", async (req, res) => {
      const token = portalSessionToken(req.get("cookie"));
      const user = await users.changePassword(portalOf(res), token, req.body, options.clientAddress(req));
      res.json(portalUserJson(user));
    }),
  );

  // ---- the provider's own team (its portal admins) ----
  router.get(
    `${P}users/`,
    operation("listPortalTeam", async (_req, res) => {
      res.json({ results: (await users.listTeam(portalOf(res))).map(portalUserJson) });
    }),
  );
  router.post(
    `${P}users/`,
    operation("invitePortalTeammate", async (req, res) => {
      const invite = await users.inviteTeammate(portalOf(res), req.body, baseUrlOf(req, publicBaseUrl));
      res.status(201).json(inviteJson(invite));
    }),
  );
  router.post(
    `${P}users/:user_id/invite/`,
    operation("reinvitePortalTeammate", async (req, res) => {
      const base = baseUrlOf(req, publicBaseUrl);
      res.json(inviteJson(await users.reinviteTeammate(portalOf(res), req.params.user_id, base)));
    }),
  );
  router.post(
    `${P}users/:user_id/role/`,
    operation("setPortalTeammateRole", async (req, res) => {
      res.json(portalUserJson(await users.setTeammateRole(portalOf(res), req.params.user_id, req.body)));
    }),
  );
  router.post(
    `${P}users/:user_id/disable/`,
    operation("disablePortalTeammate", async (req, res) => {
      res.json(portalUserJson(await users.disableTeammate(portalOf(res), req.params.user_id)));
    }),
  );

  // ---- the provider's data ----
  router.get(
    `${P}leads/`,
    operation("listPortalLeads", async (req, res) => {
      const { mode, page_size, page_token, state, updated_after, sub_id, q } = req.query;
      const page = await portal.listLeads(portalOf(res), livemodeOf(mode), {
        pageSize: page_size,
        pageToken: page_token,
        state,
        updatedAfter: date(updated_after),
        subId: sub_id,
        q,
      });
      res.json(cursorPageJson(req, page, leadJson, publicBaseUrl));
    }),
  );
  router.get(
    `${P}leads/:external_id/`,
    operation("getPortalLead", async (req, res) => {
      res.json(leadJson(await portal.getLead(portalOf(res), livemodeOf(req.query.mode), req.params.external_id)));
    }),
  );
  router.get(
    `${P}events/`,
    operation("listPortalEvents", async (req, res) => {
      const { mode, page_size, page_token, type, created_after } = req.query;
      const page = await portal.listEvents(portalOf(res), livemodeOf(mode), {
        pageSize: page_size,
        pageToken: page_token,
        type,
        createdAfter: date(created_after),
      });
      res.json(cursorPageJson(req, page, eventJson, publicBaseUrl));
    }),
  );
  router.get(
    `${P}requests/`,
    operation("listPortalRequests", async (req, res) => {
      const page = await portal.listRequests(portalOf(res), livemodeOf(req.query.mode), requestLogQueryOf(req.query));
      res.json(cursorPageJson(req, page, requestEntryJson, publicBaseUrl));
    }),
  );
  router.get(
    `${P}requests/:request_id/`,
    operation("getPortalRequest", async (req, res) => {
      const entry = await portal.getRequest(portalOf(res), livemodeOf(req.query.mode), req.params.request_id);
      res.json(requestEntryJson(entry));
    }),
  );
  router.get(
    `${P}stats/`,
    operation("getPortalStats", async (req, res) => {
      const s = await portal.stats(portalOf(res), livemodeOf(req.query.mode), statsQueryOf(req.query));
      sendStats(req, res, s, s.livemode ? "stats" : "stats-test", undefined, { totals: req.query.totals === true });
    }),
  );
  router.get(
    `${P}intake_rules/`,
    operation("getPortalIntakeRules", async (req, res) => {
      res.json(publishedJson(await portal.intakeRules(portalOf(res), livemodeOf(req.query.mode))));
    }),
  );

  // ---- money (the Public API's answers, for the session's provider and the mode's book) ----
  router.get(
    `${P}balance/`,
    operation("getPortalBalance", async (req, res) => {
      res.json(balanceJson(await portal.balance(portalOf(res), livemodeOf(req.query.mode))));
    }),
  );
  router.get(
    `${P}balance_transactions/`,
    operation("listPortalBalanceTransactions", async (req, res) => {
      const page = await portal.lines(portalOf(res), livemodeOf(req.query.mode), lineQueryOf(req.query));
      res.json(cursorPageJson(req, page, lineJson, publicBaseUrl));
    }),
  );
  router.get(
    `${P}statements/`,
    operation("listPortalStatements", async (req, res) => {
      const { mode, page_size, page_token } = req.query;
      const page = await portal.statements(portalOf(res), livemodeOf(mode), {
        pageSize: page_size,
        pageToken: page_token,
      });
      res.json(cursorPageJson(req, page, statementSummaryJson, publicBaseUrl));
    }),
  );
  router.get(
    `${P}statements/:month/`,
    operation("getPortalStatement", async (req, res) => {
      const book = portal.statementBook(portalOf(res), livemodeOf(req.query.mode));
      await sendStatement(res, statementReader(options.ledger, book), req.params.month, req.query.format);
    }),
  );
  router.get(
    `${P}terms/`,
    operation("getPortalTerms", async (req, res) => {
      const livemode = livemodeOf(req.query.mode);
      res.json(publishedTermsJson(await portal.terms(portalOf(res)), livemode));
    }),
  );
  router.post(
    `${P}terms/quote/`,
    operation("quotePortalLead", async (req, res) => {
      res.json(quoteJson(await portal.quote(portalOf(res), livemodeOf(req.query.mode), req.body)));
    }),
  );
  router.get(
    `${P}earnings/`,
    operation("getPortalEarnings", async (req, res) => {
      const { mode, days } = req.query;
      res.json(perDayJson(await portal.earnings(portalOf(res), livemodeOf(mode), days)));
    }),
  );

  // ---- webhook ----
  router.get(
    `${P}webhook/`,
    operation("getPortalWebhook", async (_req, res) => {
      res.json(endpointJson(await portal.webhook(portalOf(res))));
    }),
  );
  router.put(
    `${P}webhook/`,
    operation("setPortalWebhook", async (req, res) => {
      res.json(
        endpointJson(await portal.setWebhookUrl(portalOf(res), req.body?.webhook_url, req.body?.webhook_event_types)),
      );
    }),
  );
  router.post(
    `${P}webhook/rotate_secret/`,
    operation("rotatePortalWebhookSecret", async (req, res) => {
      res.json(rotatedSecretJson(await portal.rotateWebhookSecret(portalOf(res), req.body?.overlap_seconds)));
    }),
  );
  router.post(
    `${P}webhook/test/`,
    operation("sendPortalWebhookTest", async (_req, res) => {
      res.json(testResultJson(await portal.sendWebhookTest(portalOf(res))));
    }),
  );
  router.get(
    `${P}webhook/deliveries/`,
    operation("listPortalWebhookDeliveries", async (req, res) => {
      const { page_size, page_token } = req.query;
      const page = await portal.listDeliveries(portalOf(res), { pageSize: page_size, pageToken: page_token });
      res.json(deliveryPageJson(req, page, publicBaseUrl));
    }),
  );
  router.get(
    `${P}webhook/deliveries/:delivery_id/`,
    operation("getPortalWebhookDelivery", async (req, res) => {
      res.json(deliveryDetailJson(await portal.getDelivery(portalOf(res), req.params.delivery_id)));
    }),
  );
  router.post(
    `${P}webhook/deliveries/:delivery_id/replay/`,
    operation("replayPortalWebhookDelivery", async (req, res) => {
      res.status(202).json(deliveryJson(await portal.replayDelivery(portalOf(res), req.params.delivery_id)));
    }),
  );

  // ---- keys ----
  router.get(
    `${P}keys/`,
    operation("getPortalKeys", async (_req, res) => {
      const keys = await portal.keys(portalOf(res));
      res.json({
        live: keyJson(keys.live),
        test: keyJson(keys.test),
        sandbox_values: keys.sandboxValues.map((v) => ({ value: v.value, effect: v.effect })),
      });
    }),
  );
  router.get(
    `${P}keys/test/`,
    operation("revealPortalTestKey", async (_req, res) => {
      const key = await portal.revealTestKey(portalOf(res));
      res.json({
        api_key: key.apiKey,
        created_at: iso(key.createdAt),
        previous_key_expires_at: iso(key.previousKeyExpiresAt),
      });
    }),
  );
  router.post(
    `${P}keys/test/`,
    operation("issuePortalTestKey", async (_req, res) => {
      const issued = await portal.issueTestKey(portalOf(res));
      res.status(201).json({
        api_key: issued.apiKey,
        created_at: issued.createdAt.toISOString(),
        previous_key_expires_at: iso(issued.previousKeyExpiresAt),
      });
    }),
  );

  // ---- administrators: a provider's portal users ----
  router.get(
    `${PROVIDERS_PATH}:id/portal_users/`,
    operation("listPortalUsers", async (req, res) => {
      res.json({ results: (await users.list(req.params.id)).map(portalUserJson) });
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/portal_users/`,
    operation("invitePortalUser", async (req, res) => {
      const invite = await users.invite(actor(res), req.params.id, req.body, baseUrlOf(req, publicBaseUrl));
      res.status(201).json(inviteJson(invite));
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/portal_users/:user_id/invite/`,
    operation("reinvitePortalUser", async (req, res) => {
      const base = baseUrlOf(req, publicBaseUrl);
      res.json(inviteJson(await users.reinvite(actor(res), req.params.id, req.params.user_id, base)));
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/portal_users/:user_id/role/`,
    operation("setPortalUserRole", async (req, res) => {
      res.json(portalUserJson(await users.setRole(actor(res), req.params.id, req.params.user_id, req.body)));
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/portal_users/:user_id/disable/`,
    operation("disablePortalUser", async (req, res) => {
      res.json(portalUserJson(await users.disable(actor(res), req.params.id, req.params.user_id)));
    }),
  );
  // The team's routes are an admin's: a member is refused before its request is validated.
  const guard = Router().use(`${P}users/`, (_req, res, next) => {
    asAdmin(portalOf(res));
    next();
  });
  return { router, guard, explainers: { quotePortalLead: (body) => options.quoteViolations(body) } };
}
