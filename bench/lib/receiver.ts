/**
 * A webhook receiver for the bench, in its own process (so its work is not charged to the load
 * generator): answers every POST with 204 at once and counts them; GET /count reads the count.
 */
import type { ChildProcess } from "node:child_process";
import { spawnTracked, terminate } from "./processes.ts";

const SCRIPT = `
const http = require("node:http");
let count = 0;
const server = http.createServer((req, res) => {
  if (req.method === "GET") return void res.end(String(count));
  req.resume();
  req.on("end", () => { count++; res.writeHead(204).end(); });
});
server.keepAliveTimeout = 30000;
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

export interface BenchReceiver {
  readonly url: string;
  count(): Promise<number>;
  stop(): Promise<void>;
}

export async function startBenchReceiver(): Promise<BenchReceiver> {
  const child: ChildProcess = spawnTracked(process.execPath, ["-e", SCRIPT], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once("data", (d: Buffer) => resolve(Number(String(d).trim())));
    child.once("exit", (code) => reject(new Error(`bench receiver exited (${code})`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/hooks`,
    count: async () => Number(await (await fetch(`${base}/count`)).text()),
    stop: async () => {
      await terminate(child, 2000);
    },
  };
}
