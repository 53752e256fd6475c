/**
 * The client's address for per-address limits: the socket's peer, or, behind trusted proxies
 * (TRUST_PROXY), the nearest untrusted address in X-Forwarded-For, as Express's `trust proxy`
 * computes it (proxy-addr). With no trusted proxy the header is ignored, so it cannot be spoofed.
 */
import type { IncomingHttpHeaders } from "node:http";
import proxyaddr from "proxy-addr";
import type { Config } from "../config.ts";

interface Peer {
  readonly headers: IncomingHttpHeaders;
  readonly socket?: { readonly remoteAddress?: string | undefined } | undefined;
}

export type ClientAddress = (req: Peer) => string | undefined;

export function createClientAddress(trust: Config["trustProxy"]): ClientAddress {
  if (trust === false) return (req) => req.socket?.remoteAddress;
  const trusted =
    typeof trust === "number" ? (_addr: string, hop: number) => hop < trust : proxyaddr.compile([...trust]);
  return (req) => {
    const remoteAddress = req.socket?.remoteAddress;
    if (remoteAddress === undefined) return undefined;
    const view = { headers: req.headers, connection: { remoteAddress }, socket: { remoteAddress } };
    return proxyaddr(view as unknown as Parameters<typeof proxyaddr>[0], trusted);
  };
}
