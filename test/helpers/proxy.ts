/** A TCP proxy for tests that need a server to misbehave (a database or Redis that hangs or goes away). */
import net from "node:net";

/**
 * A TCP proxy in front of a real server that the test can make misbehave: `hang()` keeps accepting
 * and holding connections but forwards nothing (a database that hangs rather than refuses),
 * `close()` refuses new connections and cuts the open ones (a server that went away).
 */
export async function startProxy(target: { host: string; port: number }) {
  let mode: "pass" | "hang" = "pass";
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    client.on("error", () => client.destroy());
    if (mode === "hang") return; // hold it, answer nothing
    const upstream = net.connect(target.port, target.host);
    open.add(upstream);
    upstream.on("close", () => open.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("data", (d) => {
      if (mode === "pass") upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (mode === "pass") client.write(d);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    hang() {
      mode = "hang";
    },
    pass() {
      mode = "pass";
    },
    cutAll() {
      for (const s of open) s.destroy();
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
