/**
 * What the service accepts as a request's Host (HTTP/2: `:authority`): a plain `host[:port]`,
 * the host a DNS name (letters, digits, `-` and `_` in labels of up to 63 characters, an optional
 * trailing dot), an IPv4 address or a bracketed IPv6 address, the port 1 to 5 digits up to 65535.
 * Anything else (user info as in `real:8080@evil.example`, a path, a space, an empty value) is
 * refused before routing, so nothing built from the Host (the portal's expected Origin, an
 * invite link without PUBLIC_BASE_URL, Connect's request URL) can name another origin.
 */
import { isIPv6 } from "node:net";

const LABEL = "[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?";
const PLAIN_HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[([0-9A-Fa-f:.]+)\\])(?::([0-9]{1,5}))?$`);

/** True when `value` is a plain `host[:port]`. */
export function isPlainHost(value: string): boolean {
  if (value.length > 262) return false; // a 253-character name, its dot, and ":65535"
  const m = PLAIN_HOST.exec(value);
  if (m === null) return false;
  const [, ipv6, port] = m;
  if (ipv6 !== undefined && !isIPv6(ipv6)) return false;
  return port === undefined || Number(port) <= 65535;
}

/**
 * Why a request's host is refused, or undefined when it may be read: each Host and `:authority`
 * it carries must be plain, and over HTTP/2 the two must agree when both are sent. A request
 * without either (HTTP/1.0) has nothing to refuse.
 */
export function hostProblem(headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const host = headers.host;
  const authority = headers[":authority"];
  for (const value of [host, authority]) {
    if (value === undefined) continue;
    if (typeof value !== "string" || !isPlainHost(value)) {
      return "the Host header must be a host name, an IPv4 address or a bracketed IPv6 address, with an optional port";
    }
  }
  if (host !== undefined && authority !== undefined && host !== authority) {
    return "the Host header and :authority must name the same host";
  }
  return undefined;
}
