/**
 * gRPC load: N concurrent call loops (each waits for its answer before the next call, as an
 * HTTP/1.1 connection does) over HTTP/2 connections made by connect-node's gRPC transport.
 * `callsPerConnection` loops share one HTTP/2 connection, as a gRPC channel multiplexes them.
 */
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { Latencies, type LoadResult, loadResult, sampler } from "./stats.ts";

export type LeadClient = Client<typeof PublicLeadService>;

export interface GrpcLoadOptions {
  readonly baseUrl: string;
  readonly concurrency: number;
  /** Concurrent calls sharing one HTTP/2 connection. */
  readonly callsPerConnection: number;
  readonly seconds: number;
  /** One call; `loop` is the index of the calling loop. Rejects on failure. */
  readonly call: (client: LeadClient, loop: number) => Promise<unknown>;
}

export async function runGrpcLoad(options: GrpcLoadOptions): Promise<LoadResult> {
  const connections = Math.max(1, Math.ceil(options.concurrency / options.callsPerConnection));
  const managers = Array.from({ length: connections }, () => new Http2SessionManager(options.baseUrl));
  const clients = managers.map((sessionManager) =>
    createClient(PublicLeadService, createGrpcTransport({ baseUrl: options.baseUrl, sessionManager })),
  );
  const latencies = new Latencies();
  const errors = sampler();
  let failed = 0;
  const started = performance.now();
  const end = started + options.seconds * 1000;
  const loop = async (i: number) => {
    const client = clients[i % connections] as LeadClient;
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await options.call(client, i);
        latencies.add(performance.now() - t0);
      } catch (err) {
        failed++;
        errors.add(err instanceof Error ? err.message : String(err));
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, (_, i) => loop(i)));
  } finally {
    for (const m of managers) m.abort();
  }
  return loadResult(latencies, failed, (performance.now() - started) / 1000, errors.samples);
}
