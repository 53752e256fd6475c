/**
 * A TCP proxy in front of the service that loses answers: for the requests `matches` picks (by
 * their request line), it forwards the whole request, waits until the service starts answering
 * (so the service has done the work), then resets the client's connection (TCP RST) without
 * passing on a byte of the answer. Everything else passes through untouched. A client sees what
 * it would see when a connection breaks after the request was sent: no answer, and no way to
 * know whether the work was done.
 */
import net from "node:net";

export interface ResetProxy {
  readonly url: string;
  readonly port: number;
  /** Connections reset so far (answers lost). */
  readonly resets: number;
  /** The requests the proxy saw, in order, as `METHOD /path` (`POST /api/v1/public/leads/`). */
  readonly requests: readonly string[];
  close(): Promise<void>;
}

/** A request as the proxy sees it: `METHOD /path` (no query) and its headers, names in lower case. */
export interface SeenRequest {
  readonly line: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * `matches` is asked once per request, when its head has arrived; `true` loses that request's
 * answer. Connections carry one request at a time (HTTP/1.1 without pipelining, as fetch and curl
 * send), so the answer that follows a lost request is that request's.
 */
export async function startResetProxy(
  target: { host: string; port: number },
  matches: (request: SeenRequest) => boolean,
): Promise<ResetProxy> {
  const open = new Set<net.Socket>();
  const requests: string[] = [];
  let resets = 0;
  const server = net.createServer((client) => {
    open.add(client);
    const upstream = net.connect(target.port, target.host);
    open.add(upstream);
    let head: string | undefined = "";
    let doomed = false;
    client.on("close", () => {
      open.delete(client);
      upstream.destroy();
    });
    upstream.on("close", () => {
      open.delete(upstream);
      client.destroy();
    });
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("data", (chunk: Buffer) => {
      // The head of each request: at the start of the connection, or after an answer.
      if (head !== undefined) {
        head += chunk.toString("latin1");
        const end = head.indexOf("\r\n\r\n");
        const line = /^([A-Z]+) (\S+) HTTP\/1\.[01]\r\n/.exec(head);
        if (end !== -1 && line) {
          const headers: Record<string, string> = {};
          for (const h of head.slice(line[0].length, end).split("\r\n")) {
            const colon = h.indexOf(":");
            if (colon > 0) headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
          }
          const seen = { line: `${line[1]} ${(line[2] as string).split("?")[0]}`, headers };
          requests.push(seen.line);
          if (matches(seen)) doomed = true;
          head = undefined; // nothing more to read until the answer has passed
        } else if (head.length > 16_384) {
          head = undefined;
        }
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (doomed) {
        resets += 1;
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      head = ""; // the next bytes from the client start a new request
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get resets() {
      return resets;
    },
    requests,
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
