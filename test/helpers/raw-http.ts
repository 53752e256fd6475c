/**
 * HTTP/1.1 as raw bytes on a socket, for requests fetch will not send: a hostile or repeated Host,
 * a repeated Authorization, a header line the parser refuses.
 */
import net from "node:net";

/** Sends `text` and resolves with everything the server answered until it closed. */
export function rawHttp(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(text));
    let answer = "";
    socket.on("data", (d) => {
      answer += String(d);
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}
