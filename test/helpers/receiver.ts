/**
 * A real HTTP server that receives webhooks, as a provider would run one: it records every
 * request (headers and raw body) and answers as the test decides.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly at: number;
}

/** How to answer one request: a status, or "hang" to never answer (until the receiver closes). */
export type Answer = number | "hang";

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly received: Received[];
  /** Decides each answer; the default answers 204. */
  answer: (r: Received, index: number) => Answer | Promise<Answer>;
  /** Requests whose body has this `type` (and, if given, lead id). */
  ofType(type: string, leadId?: number): Received[];
  waitFor(predicate: (all: Received[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(path = "/hooks"): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const r: Received = {
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      received.push(r);
      const answer = await receiver.answer(r, received.length - 1);
      if (answer === "hang") {
        hanging.add(res);
        return;
      }
      res.writeHead(answer, { "content-type": "text/plain" }).end(answer < 300 ? "" : "nope");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    received,
    answer: () => 204,
    ofType(type, leadId) {
      return received.filter((r) => {
        const body = JSON.parse(r.body) as { type: string; data: { lead?: { id: number } } };
        return body.type === type && (leadId === undefined || body.data.lead?.id === leadId);
      });
    },
    async waitFor(predicate, timeoutMs = 10_000, what = "webhooks") {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (received ${received.length})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
