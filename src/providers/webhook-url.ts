/**
 * What a provider's webhook_url may name. Always: http(s), no credentials in the URL. In
 * production also: https only, and no address that points inside our network (loopback,
 * private, link-local such as the cloud metadata address 169.254.169.254, unique-local,
 * multicast, reserved), written as an IP literal in any notation the URL parser accepts
 * (`0x7f000001` is 127.0.0.1), nor `localhost`. Host names are resolved and checked again when a
 * notification is sent (DNS can change after the URL is saved).
 */
import ipaddr from "ipaddr.js";

export interface WebhookUrlPolicy {
  readonly production: boolean;
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
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "webhook_url must not name this host";
  if (ipaddr.isValid(host)) {
    const range = ipaddr.process(host).range();
    if (range !== "unicast") return `webhook_url must be a public address (${host} is ${range})`;
  }
  return undefined;
}
