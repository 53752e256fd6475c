/**
 * What a provider's webhook_url may name, and which addresses a webhook may reach: the one place
 * for both, used when the URL is saved (provider.ts) and again at send time (webhook.http.ts:
 * for a literal address before connecting, and in the DNS lookup request-filtering-agent calls,
 * since DNS can change after the URL is saved).
 *
 * Always: http(s), no credentials in the URL. Under production's rules also: https only, a port
 * from WEBHOOK_ALLOWED_PORTS (443 and 80 by default), not `localhost` or a name under it (in any
 * case, with or without a trailing dot), and no address outside the public internet, written as
 * an IP literal in any notation the URL parser accepts (`0x7f000001` is 127.0.0.1) or resolved
 * from a host name:
 * - IPv4: ipaddr.js's `unicast` range only (no loopback, private, link-local such as the cloud
 *   metadata address 169.254.169.254, carrier-grade NAT, multicast, reserved).
 * - IPv6: global unicast `2000::/3` only, and within it ipaddr.js's `unicast` range only. Both
 *   ipaddr.js (2.5) and request-filtering-agent (3.2) call the deprecated IPv4-compatible form
 *   `::/96` (`[::169.254.169.254]`, written `::a9fe:a9fe` by the URL parser) plain unicast; the
 *   `2000::/3` rule closes that and everything else outside global unicast (NAT64 `64:ff9b::/96`
 *   is outside it too). The IPv4-embedding forms inside it (6to4 `2002::/16`, Teredo
 *   `2001::/32`) are ipaddr.js ranges of their own and refused whole, whichever IPv4 address they
 *   carry. See docs/upstream/ipaddr-ipv4-compatible-ipv6.md.
 *
 * A refused target gets one message whatever the reason (refused range, `localhost`, a name that
 * does not resolve): telling them apart would disclose internal DNS answers.
 */
import ipaddr from "ipaddr.js";
import { DEFAULT_WEBHOOK_PORTS } from "../config.ts";

export interface WebhookUrlPolicy {
  readonly production: boolean;
  /** Ports a webhook_url may name under production's rules; undefined: any port. */
  readonly allowedPorts?: readonly number[] | undefined;
}

/** The one answer for a target outside the public internet. */
export const NOT_PUBLIC = "the URL does not resolve to a public address";

export { DEFAULT_WEBHOOK_PORTS };

const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

/** True when `address` (an IP literal) is on the public internet; false for anything else. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && !(parsed as ipaddr.IPv6).match(GLOBAL_UNICAST)) {
    // ::ffff:a.b.c.d written the IPv4 way; still refused (ipv4Mapped is not unicast below).
    return false;
  }
  return parsed.range() === "unicast";
}

/**
 * Of a host name's DNS answers, the first IPv6 address outside the public internet, if any (the
 * connection filter, request-filtering-agent, judges IPv4 answers and the rest of IPv6 itself).
 */
export function firstRefusedIpv6(answers: readonly { address: string; family: number }[]): string | undefined {
  return answers.find((a) => a.family === 6 && !isPublicAddress(a.address))?.address;
}

/** Why `raw` is not an acceptable webhook_url under `policy`, or undefined when it is. */
export function webhookUrlProblem(raw: string, policy: WebhookUrlPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "webhook_url must be an http or https URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "webhook_url must be an http or https URL";
  if (url.username !== "" || url.password !== "") return "webhook_url must not carry a user name or password";
  if (!policy.production) return undefined;
  if (url.protocol !== "https:") return "webhook_url must use https";
  const port = url.port === "" ? 443 : Number(url.port); // https by now: its default port
  const ports = policy.allowedPorts ?? DEFAULT_WEBHOOK_PORTS;
  if (!ports.includes(port)) return `webhook_url must use port ${ports.join(" or ")}`;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  // A name is the same with its trailing dot (`localhost.` is `localhost`, fully qualified); the
  // URL parser has already lower-cased it and dropped an IPv4 literal's trailing dot.
  const name = host.replace(/\.+$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return NOT_PUBLIC;
  if (ipaddr.isValid(host) && !isPublicAddress(host)) return NOT_PUBLIC;
  return undefined;
}
