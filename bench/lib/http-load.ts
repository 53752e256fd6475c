/**
 * REST load with autocannon: N keep-alive HTTP/1.1 connections for a fixed time, each request
 * built by `next()` (unique external ids for creates, random keys for reads). Latency is taken
 * from autocannon's own per-response timing, kept at full precision here.
 */
import autocannon, { type Request } from "autocannon";
import { Latencies, type LoadResult, loadResult, sampler } from "./stats.ts";

export interface HttpLoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly next: () => Request;
}

export function runHttpLoad(options: HttpLoadOptions): Promise<LoadResult> {
  const latencies = new Latencies();
  const errors = sampler();
  let failed = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.seconds,
        timeout: 10,
        requests: [{ setupRequest: (request) => ({ ...request, ...options.next() }) }],
      },
      (err, result) => {
        if (err) return reject(err);
        failed += result.errors;
        if (result.errors > 0) errors.add(`${result.errors} connection errors (${result.timeouts} timeouts)`);
        resolve(loadResult(latencies, failed, result.duration, errors.samples));
      },
    );
    instance.on("response", (_client: unknown, statusCode: number, _bytes: number, ms: number) => {
      if (statusCode >= 200 && statusCode < 300) latencies.add(ms);
      else {
        failed++;
        errors.add(`HTTP ${statusCode}`);
      }
    });
  });
}
