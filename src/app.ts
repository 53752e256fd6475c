/**
 * Composition root: database, ZIP directory, verifiers, services and both edges on one port.
 * Returns the running pieces and a `stop` that shuts them down in order.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import YAML from "yaml";
import { createApiKeyVerifier } from "./api-keys/api-key.service.ts";
import { createKeyCrypto } from "./api-keys/api-key.ts";
import { bearerToken, createAuthenticator } from "./auth/authenticate.ts";
import { devTokensAllowed, signDevelopmentToken } from "./auth/dev-token.ts";
import { createJwtVerifier } from "./auth/jwt.ts";
import { backofficeRoutes } from "./backoffice/backoffice.rest.ts";
import { createBackoffice } from "./backoffice/backoffice.service.ts";
import type { Config } from "./config.ts";
import { type DatabaseHandle, openDatabase } from "./db/database.ts";
import { buildBigTableIndexes } from "./db/indexes.ts";
import { migrateToLatest } from "./db/migrator.ts";
import { createClientAddress } from "./edge/client-address.ts";
import { noteOf } from "./edge/request-note.ts";
import { createGate } from "./edge/surfaces.ts";
import { eventRoutes } from "./events/event.rest.ts";
import { createEventRpc } from "./events/event.rpc.ts";
import { createEventService } from "./events/event.service.ts";
import { createOutboxRetention, type OutboxRetention } from "./events/outbox-retention.ts";
import { FORM_SCRIPT_PATH, formGate, formRoutes } from "./forms/form.rest.ts";
import { createFormService } from "./forms/form.service.ts";
import { createFormChallenges } from "./forms/form-challenge.ts";
import type { Handler } from "./http-types.ts";
import { capWindow } from "./intake/business-time.ts";
import { intakeRoutes } from "./intake/intake.rest.ts";
import { createIntakeProviderRpc, createIntakePublicRpc } from "./intake/intake.rpc.ts";
import { createIntakeService } from "./intake/intake.service.ts";
import { createLeadFastPaths } from "./leads/fast/fast-paths.ts";
import { leadRoutes } from "./leads/lead.rest.ts";
import { createPublicLeadRpc, leadErrorDetails } from "./leads/lead.rpc.ts";
import { createLeadService } from "./leads/lead.service.ts";
import { createLeadWorkflowRpc } from "./leads/lead-workflow.rpc.ts";
import { createLeadWorkflowService } from "./leads/lead-workflow.service.ts";
import { createLogger, errorForLog, type Logger } from "./logger.ts";
import { createMetrics, type Metrics, serveMetrics } from "./metrics.ts";
import { createLedgerService } from "./money/ledger.service.ts";
import { moneyRoutes } from "./money/money.rest.ts";
import { createMoneyProviderRpc, createMoneyPublicRpc } from "./money/money.rpc.ts";
import { createSettlement, type Settlement } from "./money/settlement.ts";
import { createTermsService } from "./money/terms.service.ts";
import { createObservedHandler } from "./observe.ts";
import { createInviteMailer } from "./portal/portal.mail.ts";
import { portalRoutes } from "./portal/portal.rest.ts";
import { createPortalService } from "./portal/portal.service.ts";
import { createPortalUserRpc } from "./portal/portal-user.rpc.ts";
import { createPortalUserService } from "./portal/portal-user.service.ts";
import { providerRoutes } from "./providers/provider.rest.ts";
import { createProviderRpc } from "./providers/provider.rpc.ts";
import { createProviderService } from "./providers/provider.service.ts";
import { createAdmission } from "./rate-limit/admission.ts";
import { createRateLimiter } from "./rate-limit/rate-limiter.ts";
import { createReadiness } from "./readiness.ts";
import { createRequestLogObserver } from "./request-log/request-log.observer.ts";
import { requestLogRoutes } from "./request-log/request-log.rest.ts";
import { createRequestLogRpc } from "./request-log/request-log.rpc.ts";
import { createRequestLogService } from "./request-log/request-log.service.ts";
import { createRequestLogWriter, type RequestLogWriter } from "./request-log/request-log.writer.ts";
import { createRestApp, SECURITY_HEADERS } from "./rest/app.ts";
import { appRoutes, CONSOLE_DIR, consoleRoutes, PORTAL_DIR } from "./rest/console.ts";
import { docsRoutes } from "./rest/docs.ts";
import { formScriptRoutes } from "./rest/form-script.ts";
import { withShortcut } from "./rest/handoff.ts";
import { landingRoutes } from "./rest/landing.ts";
import { createReturnsJob, type ReturnsJob } from "./returns/returns.job.ts";
import { returnRoutes } from "./returns/returns.rest.ts";
import { createReturnsPublicRpc, createReturnsWorkflowRpc, returnErrorDetails } from "./returns/returns.rpc.ts";
import { createReturnsService } from "./returns/returns.service.ts";
import { clientIpKey, noteKey } from "./rpc/context.ts";
import { recodingParseErrors } from "./rpc/parse-errors.ts";
import { createRpcRoutes } from "./rpc/routes.ts";
import { withGrpcShortcut } from "./rpc/shortcut.ts";
import { createSandbox, type Sandbox } from "./sandbox/sandbox.service.ts";
import { createSandboxRefusal } from "./sandbox/sandbox.ts";
import { createOnePortServer } from "./server.ts";
import { stateRoutes } from "./states/state.rest.ts";
import { createCommonRpc } from "./states/state.rpc.ts";
import { createStateService } from "./states/state.service.ts";
import { statsRoutes } from "./stats/stats.rest.ts";
import { createStatsRollup, type StatsRollup } from "./stats/stats.rollup.ts";
import { createStatsRpc } from "./stats/stats.rpc.ts";
import { createStatsService } from "./stats/stats.service.ts";
import { createWebhookTransport } from "./webhooks/webhook.http.ts";
import { queueStats } from "./webhooks/webhook.repository.ts";
import { webhookRoutes } from "./webhooks/webhook.rest.ts";
import { createWebhookRpc } from "./webhooks/webhook.rpc.ts";
import { createWebhookService } from "./webhooks/webhook.service.ts";
import { createWebhookWorker } from "./webhooks/webhook.worker.ts";
import { loadZipDirectory } from "./zip/zip-directory.ts";

export const OPENAPI_PATH = new URL("../openapi/openapi.yaml", import.meta.url);

/** The same 64 KiB cap on an RPC message as on a REST body; larger messages get RESOURCE_EXHAUSTED. */
const RPC_READ_MAX_BYTES = 64 * 1024;

export interface AppOptions {
  readonly logger?: Logger;
  /** Clock for rules that depend on time (tests). */
  readonly now?: () => Date;
  /** An embedded database image to start from when DATA_DIR is in memory (tests; db/database.ts). */
  readonly databaseImage?: Blob;
}

export interface App {
  readonly config: Config;
  readonly logger: Logger;
  readonly database: DatabaseHandle;
  readonly metrics: Metrics;
  /** The sandbox's moves and clean-up (its loop runs by itself; exposed for operations and tests). */
  readonly sandbox: Sandbox;
  /** Retention of lead events and webhook deliveries (runOnce exposed for operations and tests). */
  readonly outboxRetention: OutboxRetention;
  /** The request log's writer (flush and retention exposed for operations and tests); undefined when off. */
  readonly requestLog: RequestLogWriter | undefined;
  /** The stats rollup job (its loop runs by itself; exposed for operations and tests). */
  readonly statsRollup: StatsRollup;
  /** The settlement job (its loop runs by itself; exposed for operations and tests). */
  readonly settlement: Settlement;
  /** The returns job (approves uncontested returns past their deadline; exposed for tests). */
  readonly returnsJob: ReturnsJob;
  /** Starts listening; resolves to the bound port (useful with PORT=0). */
  listen(): Promise<number>;
  stop(): Promise<void>;
}

/** The METRICS_PORT admin listener: /metrics only, no token (bind it to a private address). */
function createMetricsServer(metrics: Metrics) {
  return http.createServer((req, res) => {
    if (req.url === "/metrics" && req.method === "GET") return void serveMetrics(metrics, null, req, res);
    res.writeHead(404).end();
  });
}

function loadSpec() {
  const text = readFileSync(OPENAPI_PATH, "utf8");
  return { text, document: YAML.parse(text) as object };
}

export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const now = options.now ?? (() => new Date());
  const [database, zips, spec] = await Promise.all([
    openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
      timeoutMs: config.databaseTimeoutMs,
      ...(options.databaseImage && { image: options.databaseImage }),
      onPoolError: (err) => logger.warn({ err: err.message }, "database connection lost"),
    }),
    Promise.resolve().then(loadZipDirectory),
    Promise.resolve().then(loadSpec),
  ]);
  // On a connection without the requests' time-out: on a big database they take minutes.
  const applied = await database.maintenance((db) => migrateToLatest(db));
  if (applied.length > 0) logger.info({ migrations: applied }, "migrations applied");
  // Outside the migrations' transaction: concurrently with writes on Postgres (db/indexes.ts).
  const built = await database.maintenance((db) => buildBigTableIndexes(db, database.kind));
  if (built.length > 0) logger.info({ indexes: built }, "indexes built");
  const { db } = database;

  const crypto = createKeyCrypto(config.apiKeySecret);
  const apiKeys = createApiKeyVerifier({
    db,
    crypto,
    now,
    onTouchError: (err) => logger.warn({ err: errorForLog(err) }, "could not record key use"),
  });
  // The Redis gauge reads the limiter at scrape time; the limiter reports fail-opens to metrics.
  const metrics = createMetrics({
    poolStats: database.poolStats,
    redisStatus: () => limiter.status(),
    webhookQueue: () => queueStats(db),
  });
  const limiter = await createRateLimiter({
    redisUrl: config.redisUrl,
    namespace: config.redisNamespace,
    logger,
    now,
    onFailOpen: () => metrics.failedOpen(),
  });
  const admission = createAdmission(limiter, {
    authFailuresPerMinute: config.rateLimit.authFailuresPerMinute,
    readsPerMinute: config.requestLog.readsPerMinute,
    onRejected: (window) => metrics.rateLimited(window),
  });
  const auth = createAuthenticator(apiKeys, createJwtVerifier(config.jwt), admission.guardAuth);
  const intake = createIntakeService({
    db,
    now,
    settings: {
      zone: config.intake.businessTimezone,
      duplicateWindowDays: config.intake.duplicateWindowDays,
      duplicateMatch: config.intake.duplicateMatch,
    },
    onEvent: () => {
      metrics.eventWritten("intake_rules.changed");
      webhookWorker.eventWritten();
    },
  });
  const moneyEvent = (type: string) => {
    metrics.eventWritten(type);
    webhookWorker.eventWritten();
  };
  const terms = createTermsService({
    db,
    currency: config.money.currency,
    zips,
    zone: config.intake.businessTimezone,
    now,
    enabled: config.money.enabled,
    onEvent: () => moneyEvent("terms.changed"),
  });
  const ledger = createLedgerService({
    db,
    currency: config.money.currency,
    zone: config.intake.businessTimezone,
    now,
    onEvent: moneyEvent,
  });
  const settlement = createSettlement({
    db,
    logger,
    intervalMs: config.money.settlementIntervalMs,
    now,
    onRun: (run) => metrics.jobRun("settlement", run),
  });
  const returns = createReturnsService({
    db,
    currency: config.money.currency,
    zone: config.intake.businessTimezone,
    now,
    onEvent: (type, livemode) => {
      if (livemode) metrics.eventWritten(type);
      webhookWorker.eventWritten();
    },
  });
  const returnsJob = createReturnsJob({
    returns,
    logger,
    intervalMs: config.money.returnsIntervalMs,
    onRun: (run) => metrics.jobRun("returns", run),
  });
  const leads = createLeadService({
    db,
    zips,
    intake,
    zone: config.intake.businessTimezone,
    now,
    pricing: terms.pricing,
    sandboxRefusal: createSandboxRefusal(config.intake.businessTimezone),
    onCreated: (lead) => {
      if (lead.livemode) {
        metrics.leadCreated();
        metrics.eventWritten("lead.created");
      } else metrics.testLeadCreated();
      webhookWorker.eventWritten();
    },
  });
  const providers = createProviderService({
    db,
    crypto,
    now,
    defaults: { perMinute: config.rateLimit.defaultPerMinute, perDay: config.rateLimit.defaultPerDay },
    production: config.production,
    webhookPorts: config.webhooks.allowedPorts,
    onProviderChanged: (id) => apiKeys.forgetProvider(id),
    // A deactivated provider's portal sessions end with the change (portalUsers is made below).
    onDeactivating: (trx, actor, id) => portalUsers.endProviderSessions(trx, actor, id),
    businessTimezone: config.intake.businessTimezone,
  });
  const states = createStateService(db);
  const events = createEventService(db, config.intake.businessTimezone);
  const workflow = createLeadWorkflowService({
    database,
    onEvent: (type, livemode) => {
      if (livemode) metrics.eventWritten(type);
      webhookWorker.eventWritten();
    },
  });
  const sandbox = createSandbox({
    db,
    workflow,
    logger,
    retentionDays: config.sandboxRetentionDays,
    now,
    onJobRun: (job, run) => metrics.jobRun(job, run),
  });
  const outboxRetention = createOutboxRetention({
    db,
    logger,
    eventRetentionDays: config.eventRetentionDays,
    deliveryRetentionDays: config.deliveryRetentionDays,
    now,
    onJobRun: (job, run) => metrics.jobRun(job, run),
  });
  const transport = createWebhookTransport({
    timeoutMs: config.webhooks.timeoutMs,
    allowPrivateTargets: config.webhooks.allowPrivateTargets,
    production: config.production,
    allowedPorts: config.webhooks.allowedPorts,
  });
  const webhooks = createWebhookService({ db, crypto, transport, now, zone: config.intake.businessTimezone });
  const webhookWorker = createWebhookWorker({
    database,
    transport,
    crypto,
    logger,
    concurrency: config.webhooks.concurrency,
    perEndpoint: config.webhooks.perEndpoint,
    testConcurrency: config.webhooks.testConcurrency,
    timeoutMs: config.webhooks.timeoutMs,
    retryScheduleMs: config.webhooks.retryScheduleMs,
    zone: config.intake.businessTimezone,
    onOutcome: (outcome) => metrics.webhookOutcome(outcome),
  });
  const requestLogWriter = config.requestLog.enabled
    ? createRequestLogWriter({
        db,
        logger,
        zone: config.intake.businessTimezone,
        now,
        retentionDays: config.requestLog.retentionDays,
        onDropped: (n) => metrics.requestLogDropped(n),
        onTallied: () => metrics.requestLogTallied(),
        onJobRun: (run) => metrics.jobRun("request_log_retention", run),
      })
    : undefined;
  const requestLog = createRequestLogService(db);
  const stats = createStatsService({ db, zone: config.intake.businessTimezone, now });
  const statsRollup = createStatsRollup({ db, zone: config.intake.businessTimezone, logger, now });
  const shutdown = new AbortController();
  const mailer = config.portal.smtpUrl ? createInviteMailer(config.portal.smtpUrl, config.portal.mailFrom) : undefined;
  const portalUsers = createPortalUserService({
    db,
    crypto,
    throttle: limiter,
    now,
    requireSecondFactor: config.portal.requireSecondFactor,
    mailer: mailer?.send,
    resetMailer: mailer?.sendReset,
    onMailError: (err) => logger.warn({ err: errorForLog(err) }, "could not e-mail a portal invite or reset link"),
  });
  const portal = createPortalService({
    users: portalUsers,
    providers,
    leads,
    events,
    requestLog,
    stats,
    intake,
    webhooks,
    ledger,
    terms,
  });

  const gate = createGate(auth, admission, (token) => portalUsers.authenticate(token));
  const clientAddress = createClientAddress(config.trustProxy);
  const forms = createFormService({
    db,
    now,
    zips,
    challenges: createFormChallenges({
      db,
      masterSecret: config.apiKeySecret,
      now,
      turnstile: config.forms.turnstile,
    }),
    brokerName: config.forms.brokerName,
    limitPerIpPerHour: config.forms.limitPerIpPerHour,
    admission,
    attempts: limiter,
    leads,
    weekStart: (at) => capWindow("week", at, config.intake.businessTimezone).start,
  });
  const rest = createRestApp({
    spec,
    gate,
    clientAddress,
    features: [
      leadRoutes(leads, config.publicBaseUrl),
      intakeRoutes(intake),
      eventRoutes(events, config.publicBaseUrl),
      providerRoutes(providers, sandbox, config.publicBaseUrl),
      webhookRoutes(webhooks, config.publicBaseUrl),
      backofficeRoutes(createBackoffice({ db, admission }), config.publicBaseUrl),
      stateRoutes(states),
      requestLogRoutes(requestLog, config.publicBaseUrl),
      statsRoutes(stats, config.publicBaseUrl),
      moneyRoutes(terms, ledger, config.publicBaseUrl),
      returnRoutes(returns, config.publicBaseUrl),
      formRoutes(forms, { clientAddress, publicBaseUrl: config.publicBaseUrl }),
      portalRoutes(portal, portalUsers, {
        clientAddress,
        publicBaseUrl: config.publicBaseUrl,
        now,
        ledger,
        quoteViolations: terms.quoteViolations,
      }),
    ],
    publicBaseUrl: config.publicBaseUrl,
    logger,
    validateResponses: config.validateResponses,
    readiness: createReadiness(db, limiter),
    extraRoutes: [
      formGate(forms, clientAddress),
      landingRoutes(spec.document),
      docsRoutes(),
      consoleRoutes(CONSOLE_DIR, {
        devToken: devTokensAllowed(config)
          ? () => signDevelopmentToken(config.jwt, { ttlSeconds: 8 * 3600 })
          : undefined,
      }),
      appRoutes("/portal", PORTAL_DIR, "the provider portal", "portal/ into portal/dist"),
      formScriptRoutes(FORM_SCRIPT_PATH),
    ],
  });
  const errorDetails = [leadErrorDetails, returnErrorDetails];
  // The speed-only paths of a lead's GET and POST (leads/fast/), in front of both edges: FAST_PATHS.
  const fast = config.fastPaths
    ? createLeadFastPaths({
        gate,
        clientAddress,
        leads,
        logger,
        spec: spec.document,
        restHeaders: SECURITY_HEADERS,
        validateResponses: config.validateResponses,
        readMaxBytes: RPC_READ_MAX_BYTES,
        errorDetails,
      })
    : undefined;
  const restHandler = withShortcut(rest as never, fast?.rest);
  const routes = createRpcRoutes({
    gate,
    logger,
    publicLeads: {
      ...createPublicLeadRpc(leads),
      ...createEventRpc(events),
      ...createIntakePublicRpc(intake),
      ...createRequestLogRpc(requestLog),
      ...createStatsRpc(stats),
      ...createMoneyPublicRpc(terms, ledger),
      ...createReturnsPublicRpc(returns),
    },
    providers: {
      ...createProviderRpc(providers, sandbox),
      ...createWebhookRpc(webhooks),
      ...createIntakeProviderRpc(intake),
      ...createPortalUserRpc(portalUsers, config.publicBaseUrl),
      ...createMoneyProviderRpc(terms, ledger),
    },
    common: createCommonRpc(states),
    workflow: { ...createLeadWorkflowRpc(workflow, shutdown.signal), ...createReturnsWorkflowRpc(returns) },
    errorDetails,
  });
  const connect = connectNodeAdapter({
    routes: recodingParseErrors(routes),
    // The same 64 KiB cap as a REST body; larger messages get RESOURCE_EXHAUSTED.
    readMaxBytes: RPC_READ_MAX_BYTES, // the fast path (leads/fast/grpc.ts) applies the same cap
    contextValues: (req) => {
      const values = createContextValues().set(clientIpKey, clientAddress(req));
      const note = noteOf(req);
      return note ? values.set(noteKey, note) : values;
    },
    fallback: (req, res) => {
      if (req.httpVersionMajor >= 2) {
        res.writeHead(505, { "content-type": "text/plain" });
        res.end("REST is served over HTTP/1.1; HTTP/2 is for gRPC and Connect\n");
        return;
      }
      restHandler(req as never, res as never);
    },
  });
  const dispatch = withGrpcShortcut(connect as Handler, fast?.grpc);
  const handler = createObservedHandler(dispatch, logger, metrics, {
    metricsToken: config.metricsToken,
    routes: Object.keys((spec.document as { paths?: object }).paths ?? {}),
    observer:
      requestLogWriter &&
      createRequestLogObserver({
        record: (entry) => requestLogWriter.record(entry),
        clientAddress: (req) => clientAddress(req as never),
        identify: (authorization) => {
          const token = bearerToken(authorization);
          return token === undefined ? Promise.resolve(undefined) : apiKeys.verify(token).catch(() => undefined);
        },
        now,
      }),
  });
  const server = createOnePortServer(handler, logger);
  const metricsServer = config.metricsPort === undefined ? undefined : createMetricsServer(metrics);

  return {
    config,
    logger,
    database,
    metrics,
    sandbox,
    outboxRetention,
    requestLog: requestLogWriter,
    statsRollup,
    settlement,
    returnsJob,
    async listen() {
      if (metricsServer && config.metricsPort !== undefined) {
        await new Promise<void>((resolve, reject) => {
          metricsServer.once("error", reject);
          metricsServer.listen(config.metricsPort, config.metricsHost, () => {
            metricsServer.off("error", reject);
            resolve();
          });
        });
      }
      const port = await server.listen(config.port, config.host);
      await webhookWorker.start();
      sandbox.start();
      outboxRetention.start();
      requestLogWriter?.start();
      statsRollup.start();
      settlement.start();
      returnsJob.start();
      return port;
    },
    async stop() {
      shutdown.abort();
      metricsServer?.close();
      await server.close(config.shutdownTimeoutMs);
      await sandbox.stop();
      await outboxRetention.stop();
      // After the server has closed: every answered request's entry is written.
      await requestLogWriter?.stop();
      await statsRollup.stop();
      await settlement.stop();
      await returnsJob.stop();
      // Deliveries in flight get the same grace; any left unanswered are sent again later.
      await webhookWorker.stop(config.shutdownTimeoutMs);
      transport.close();
      mailer?.close();
      await workflow.close();
      await limiter.close();
      await apiKeys.flush();
      await database.close();
    },
  };
}
