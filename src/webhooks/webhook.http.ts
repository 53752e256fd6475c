/**
 * The outgoing HTTP edge of webhooks: signs an event per Standard Webhooks with the
 * `standardwebhooks` reference package and POSTs it. The connection goes through
 * request-filtering-agent, which checks the address each host name resolves to at connect time
 * (so a DNS answer changed after the URL was saved cannot reach inside the network); redirects
 * are never followed; at most MAX_RESPONSE_BYTES of an answer are read.
 */
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";
import { Webhook } from "standardwebhooks";
import { intakeRulesJson } from "../intake/intake.rest.ts";
import { leadJson } from "../leads/lead.rest.ts";
import { firstRefusedIpv6, isPublicAddress, NOT_PUBLIC, webhookUrlProblem } from "../providers/webhook-url.ts";
import type { AttemptOutcome, OutgoingEvent, WebhookTransport } from "./webhook.ts";

export const MAX_RESPONSE_BYTES = 64 * 1024;
export const USER_AGENT = "lead-provider-api-webhooks/1";

export interface TransportOptions {
  readonly timeoutMs: number;
  /** Loopback, private, link-local targets allowed (development and tests only). */
  readonly allowPrivateTargets: boolean;
  /** Production's rules: https only, on an allowed port. */
  readonly production: boolean;
  /** Ports allowed under production's rules (WEBHOOK_ALLOWED_PORTS). */
  readonly allowedPorts?: readonly number[] | undefined;
}

/** The JSON body: Standard Webhooks' `{type, timestamp, data}`, and `livemode` on every event. */
export function eventBody(event: OutgoingEvent): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.occurredAt.toISOString(),
    livemode: event.livemode,
    data:
      event.lead !== undefined
        ? { lead: leadJson(event.lead) }
        : event.intakeRules !== undefined
          ? { intake_rules: intakeRulesJson(event.intakeRules) }
          : { ...event.data },
  });
}

/** `v1,<sig>` for each secret, space-separated (several while a rotation overlaps). */
export function signatures(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((s) => new Webhook(s).sign(id, at, body)).join(" ");
}

export function createWebhookTransport(options: TransportOptions): WebhookTransport {
  const agentOptions = {
    keepAlive: true,
    maxSockets: 64,
    allowPrivateIPAddress: options.allowPrivateTargets,
  };
  // What request-filtering-agent lets through of IPv6 outside global unicast (webhook-url.ts) is
  // refused by our own lookup, which the agent calls before its own checks. (Its
  // denyIPAddressList would do it too, but it warns with a stack trace for every IPv4 address
  // compared with an IPv6 range.) A literal address needs no lookup, so it is checked in send().
  const lookup: LookupFunction | undefined = options.allowPrivateTargets ? undefined : globalUnicastLookup;
  const policy = { production: options.production, allowedPorts: options.allowedPorts };
  const agents = {
    "http:": new RequestFilteringHttpAgent(agentOptions),
    "https:": new RequestFilteringHttpsAgent(agentOptions),
  };

  return {
    send(url, secrets, event) {
      const started = performance.now();
      const done = (statusCode: number | null, error: string | null): AttemptOutcome => ({
        statusCode,
        error,
        latencyMs: Math.round(performance.now() - started),
      });
      const problem = webhookUrlProblem(url, policy);
      if (problem !== undefined) return Promise.resolve(done(null, problem));
      if (secrets.length === 0) return Promise.resolve(done(null, "the endpoint has no signing secret"));
      const target = new URL(url);
      const literal = target.hostname.replace(/^\[|\]$/g, "");
      if (!options.allowPrivateTargets && isIP(literal) !== 0 && !isPublicAddress(literal)) {
        return Promise.resolve(done(null, NOT_PUBLIC));
      }
      const body = eventBody(event);
      // The signed timestamp is the send time (receivers reject stale ones), not the event's.
      const now = new Date();
      const headers = {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "user-agent": USER_AGENT,
        "webhook-id": event.id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signatures(secrets, event.id, now, body),
      };
      return new Promise<AttemptOutcome>((resolve) => {
        let settled = false;
        const finish = (statusCode: number | null, error: string | null) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(done(statusCode, error));
        };
        const client = target.protocol === "https:" ? https : http;
        const req = client.request(target, {
          method: "POST",
          headers,
          agent: agents[target.protocol as "http:" | "https:"],
          // Stryker disable next-line all: handing the lookup over shows only with DNS answers a test here cannot choose (docs/testing.md).
          ...(lookup !== undefined && { lookup }),
        });
        const timer = setTimeout(() => {
          finish(null, `no answer within ${options.timeoutMs} ms`);
          req.destroy();
        }, options.timeoutMs);
        req.on("error", (err) => finish(null, describeError(err)));
        req.on("response", (res) => {
          const status = res.statusCode ?? 0;
          let read = 0;
          res.on("data", (chunk: Buffer) => {
            read += chunk.length;
            // Only the status matters; a receiver cannot make us hold a large body.
            if (read > MAX_RESPONSE_BYTES) res.destroy();
          });
          const settle = () => finish(status, statusError(status));
          res.on("end", settle);
          res.on("close", settle);
          res.on("error", settle);
        });
        req.end(body);
      });
    },
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}

/**
 * dns.lookup that refuses an IPv6 answer outside global unicast (webhook-url.ts), worded as
 * request-filtering-agent words its refusals, so describeError() answers NOT_PUBLIC for both.
 */
// Stryker disable all: its rule is firstRefusedIpv6 (webhook-url.ts, mutated and unit-tested);
// this is callback plumbing around dns.lookup whose branches need DNS answers a test here cannot
// choose (a host name resolving to a public or an IPv4-compatible address). docs/testing.md.
const globalUnicastLookup: LookupFunction = (hostname, lookupOptions, callback) => {
  dns.lookup(hostname, { ...lookupOptions, all: true }, (err, addresses) => {
    if (err) return callback(err, "", 0);
    const refused = firstRefusedIpv6(addresses);
    if (refused !== undefined) {
      return callback(new Error(`DNS lookup ${refused}(family:6, host:${hostname}) is not allowed.`), "", 0);
    }
    if (lookupOptions.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "", 0);
    callback(null, first.address, first.family);
  });
};
// Stryker restore all

function statusError(status: number): string | null {
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return `the endpoint answered ${status}; redirects are not followed`;
  return `the endpoint answered ${status}`;
}

/**
 * Socket and filter errors as a short reason for last_error (no payload, no secret). A refused
 * address and a name that does not resolve read the same (webhook-url.ts NOT_PUBLIC), so the
 * answer never discloses what a host name resolves to inside the network.
 */
function describeError(err: Error & { code?: string }): string {
  if (/^DNS lookup .* is not allowed/.test(err.message)) return NOT_PUBLIC;
  if (err.code === "ENOTFOUND" || err.code === "EAI_AGAIN" || err.code === "EAI_NODATA") return NOT_PUBLIC;
  if (err.code !== undefined && /^E[A-Z]+$/.test(err.code)) return `could not connect to the endpoint (${err.code})`;
  return err.message.slice(0, 300);
}
