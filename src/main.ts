/** Entry point: reads the configuration, starts the app, stops it cleanly on SIGTERM/SIGINT. */
import { createApp } from "./app.ts";
import { isWorker, joinClusterMetrics, runPrimary } from "./cluster.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { DataDirLockedError } from "./db/data-dir-lock.ts";
import { readyBanner } from "./entry-points.ts";
import { createLogger, errorForLog } from "./logger.ts";

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  if (config.jwt.usingDevSecret)
    logger.warn("JWT_SECRET is not set: using the development secret (never in production)");
  if (config.usingDevApiKeySecret)
    logger.warn("API_KEY_SECRET is not set: using the development secret (never in production)");

  if (config.webConcurrency > 1 && !isWorker()) {
    // WEB_CONCURRENCY: this process only supervises the workers (cluster.ts).
    process.exit(await runPrimary(config, logger));
  }

  const started = performance.now();
  let app: Awaited<ReturnType<typeof createApp>>;
  try {
    app = await createApp(config, { logger });
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  if (isWorker()) joinClusterMetrics(app.metrics);
  let port: number;
  try {
    port = await app.listen();
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { port?: number; address?: string };
    if (e.code !== "EADDRINUSE" && e.code !== "EACCES") throw err;
    const which = e.port ?? config.port;
    process.stderr.write(
      e.code === "EADDRINUSE"
        ? `port ${which} is already in use (another process listens on ${e.address ?? config.host}:${which}); stop it or set PORT\n`
        : `port ${which} cannot be opened by this user (${e.address ?? config.host}:${which}); set PORT to 1024 or above\n`,
    );
    await app.stop().catch(() => undefined);
    process.exit(78); // EX_CONFIG
  }
  logger.info(
    { port, database: app.database.kind, startup_ms: Math.round(performance.now() - started) },
    "lead provider api listening",
  );
  // One banner for a person (stderr, so stdout stays one JSON log line per line); in a cluster
  // the primary prints it once every worker listens.
  if (!isWorker()) process.stderr.write(readyBanner(config.host, port));

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    try {
      await app.stop();
      logger.info("stopped");
      process.exit(0);
    } catch (err) {
      logger.error({ err: errorForLog(err) }, "shutdown failed");
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // A worker whose primary is gone (killed outright) stops too, instead of serving unsupervised.
  if (isWorker()) process.on("disconnect", () => void stop("primary gone"));
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
