/**
 * gRPC load over h2c from pre-encoded frames, so that the load generator is not what is measured.
 * h2load would do for one body, but CreateLead needs a distinct body per call (an external id is
 * accepted once); so this is the small part of h2load the bench needs: a raw HTTP/2 client on a
 * TCP socket that writes a prepared HEADERS frame (HPACK literals, no dynamic table) and a DATA
 * frame holding one of many pre-encoded gRPC messages per call, and only reads frame headers back.
 *
 * A call counts as successful when its answer carried a DATA frame (the response message) and
 * trailers byte-identical to the first successful call's (`grpc-status: 0`). The client asks for
 * a header table of size 0, so the server cannot compress those trailers differently per call.
 * Anything else (a trailers-only error, RST_STREAM, GOAWAY, a dropped connection) is an error.
 */
import { connect, type Socket } from "node:net";
import { Latencies, type LoadResult, loadResult, sampler } from "./stats.ts";

export interface H2cOptions {
  readonly url: string;
  /** e.g. /leadprovider.v1.PublicLeadService/GetLead */
  readonly path: string;
  /** Concurrent calls in all. */
  readonly concurrency: number;
  readonly callsPerConnection: number;
  readonly seconds: number;
  /** Values of the authorization header, one picked at random per call. */
  readonly authorizations: readonly string[];
  /** The next request message, already protobuf-encoded (without the gRPC length prefix). */
  readonly nextMessage: () => Uint8Array;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8 } as const;
const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

function frameHeader(length: number, type: number, flags: number, stream: number): Buffer {
  const b = Buffer.allocUnsafe(9);
  b.writeUIntBE(length, 0, 3);
  b[3] = type;
  b[4] = flags;
  b.writeUInt32BE(stream, 5);
  return b;
}

/** HPACK integer with an N-bit prefix (RFC 7541 §5.1). */
function hpackInt(value: number, prefixBits: number, firstByte: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [firstByte | value];
  const out = [firstByte | max];
  let v = value - max;
  while (v >= 128) {
    out.push((v % 128) + 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

const hpackString = (s: string) => {
  const bytes = Buffer.from(s, "latin1");
  return [...hpackInt(bytes.length, 7, 0), ...bytes];
};

/** A request header block: indexed :method POST and :scheme http, literals without indexing. */
function headerBlock(authority: string, path: string, authorization: string): Buffer {
  return Buffer.from([
    0x83, // :method: POST (static index 3)
    0x86, // :scheme: http (static index 6)
    ...hpackInt(4, 4, 0x00), // :path, name from static index 4, literal value, not indexed
    ...hpackString(path),
    ...hpackInt(1, 4, 0x00), // :authority (static index 1)
    ...hpackString(authority),
    ...[
      ["content-type", "application/grpc"],
      ["te", "trailers"],
      ["authorization", authorization],
    ].flatMap(([name, value]) => [0x00, ...hpackString(name as string), ...hpackString(value as string)]),
  ]);
}

/** Drops leading dynamic table size updates (001xxxxx) so blocks compare by their fields. */
function fieldsOf(block: Buffer): Buffer {
  let i = 0;
  while (i < block.length && ((block[i] as number) & 0xe0) === 0x20) {
    i++;
    if (((block[i - 1] as number) & 0x1f) === 0x1f) while (i < block.length && ((block[i++] as number) & 0x80) !== 0);
  }
  return block.subarray(i);
}

interface Call {
  readonly started: number;
  sawData: boolean;
}

export async function runH2cLoad(o: H2cOptions): Promise<LoadResult> {
  const { hostname, port } = new URL(o.url);
  const authority = `${hostname}:${port}`;
  const blocks = o.authorizations.map((a) => headerBlock(authority, o.path, a));
  const latencies = new Latencies();
  const errors = sampler();
  let failed = 0;
  let okTrailers: Buffer | undefined;
  const started = performance.now();
  const end = started + o.seconds * 1000;
  const connections = Math.max(1, Math.ceil(o.concurrency / o.callsPerConnection));

  const runConnection = (slots: number) =>
    new Promise<void>((resolve) => {
      const socket: Socket = connect({ host: hostname, port: Number(port), noDelay: true });
      const calls = new Map<number, Call>();
      let nextStream = 1;
      let pending: Buffer = Buffer.alloc(0);
      let received = 0;
      let closed = false;
      const finish = () => {
        if (closed) return;
        closed = true;
        socket.destroy();
        resolve();
      };

      const send = () => {
        if (closed || performance.now() >= end) {
          if (calls.size === 0) finish();
          return;
        }
        const message = o.nextMessage();
        const block = blocks[Math.floor(Math.random() * blocks.length)] as Buffer;
        const stream = nextStream;
        nextStream += 2;
        const out = Buffer.allocUnsafe(9 + block.length + 9 + 5 + message.length);
        frameHeader(block.length, FRAME.HEADERS, FLAG.END_HEADERS, stream).copy(out, 0);
        block.copy(out, 9);
        let at = 9 + block.length;
        frameHeader(5 + message.length, FRAME.DATA, FLAG.END_STREAM, stream).copy(out, at);
        at += 9;
        out[at] = 0; // not compressed
        out.writeUInt32BE(message.length, at + 1);
        out.set(message, at + 5);
        calls.set(stream, { started: performance.now(), sawData: false });
        socket.write(out);
      };

      const fail = (stream: number, why: string) => {
        if (!calls.delete(stream)) return;
        failed++;
        errors.add(why);
        send();
      };

      const onFrame = (type: number, flags: number, stream: number, payload: Buffer) => {
        switch (type) {
          case FRAME.SETTINGS:
            if ((flags & FLAG.ACK) === 0) socket.write(frameHeader(0, FRAME.SETTINGS, FLAG.ACK, 0));
            return;
          case FRAME.PING:
            if ((flags & FLAG.ACK) === 0)
              socket.write(Buffer.concat([frameHeader(8, FRAME.PING, FLAG.ACK, 0), payload]));
            return;
          case FRAME.DATA: {
            received += payload.length;
            if (received > 1 << 24) {
              const update = Buffer.allocUnsafe(4);
              update.writeUInt32BE(received);
              socket.write(Buffer.concat([frameHeader(4, FRAME.WINDOW_UPDATE, 0, 0), update]));
              received = 0;
            }
            const call = calls.get(stream);
            if (call && payload.length >= 5) call.sawData = true;
            return;
          }
          case FRAME.HEADERS: {
            if ((flags & FLAG.END_STREAM) === 0) return; // the response headers
            const call = calls.get(stream);
            if (!call) return;
            let block = payload;
            if (flags & FLAG.PADDED) block = block.subarray(1, block.length - (block[0] as number));
            if (flags & FLAG.PRIORITY) block = block.subarray(5);
            const fields = fieldsOf(block);
            if (call.sawData && okTrailers === undefined) okTrailers = Buffer.from(fields);
            if (!call.sawData || okTrailers === undefined || !fields.equals(okTrailers)) {
              return fail(stream, call.sawData ? "trailers other than grpc-status 0" : "a trailers-only error answer");
            }
            calls.delete(stream);
            latencies.add(performance.now() - call.started);
            return send();
          }
          case FRAME.RST_STREAM:
            return fail(stream, `RST_STREAM ${payload.readUInt32BE(0)}`);
          case FRAME.GOAWAY:
            for (const s of [...calls.keys()]) fail(s, `GOAWAY ${payload.readUInt32BE(4)}`);
            return finish();
        }
      };

      socket.on("data", (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        let at = 0;
        while (pending.length - at >= 9) {
          const length = pending.readUIntBE(at, 3);
          if (pending.length - at < 9 + length) break;
          onFrame(
            pending[at + 3] as number,
            pending[at + 4] as number,
            pending.readUInt32BE(at + 5) & 0x7fffffff,
            pending.subarray(at + 9, at + 9 + length),
          );
          at += 9 + length;
        }
        pending = at === pending.length ? Buffer.alloc(0) : pending.subarray(at);
        if (closed === false && calls.size === 0 && performance.now() >= end) finish();
      });
      socket.on("error", (err) => {
        for (const s of [...calls.keys()]) fail(s, `socket: ${err.message}`);
        finish();
      });
      socket.on("close", () => {
        for (const s of [...calls.keys()]) fail(s, "connection closed");
        finish();
      });
      socket.on("connect", () => {
        const settings = Buffer.alloc(18);
        settings.writeUInt16BE(1, 0); // HEADER_TABLE_SIZE
        settings.writeUInt32BE(0, 2);
        settings.writeUInt16BE(2, 6); // ENABLE_PUSH
        settings.writeUInt32BE(0, 8);
        settings.writeUInt16BE(4, 12); // INITIAL_WINDOW_SIZE
        settings.writeUInt32BE(0x7fffffff, 14);
        const update = Buffer.allocUnsafe(4);
        update.writeUInt32BE(0x7fffffff - 65_535);
        socket.write(
          Buffer.concat([
            PREFACE,
            frameHeader(settings.length, FRAME.SETTINGS, 0, 0),
            settings,
            frameHeader(4, FRAME.WINDOW_UPDATE, 0, 0),
            update,
          ]),
        );
        for (let i = 0; i < slots; i++) send();
      });
    });

  await Promise.all(
    Array.from({ length: connections }, (_, i) => {
      const slots = Math.min(o.callsPerConnection, o.concurrency - i * o.callsPerConnection);
      return runConnection(slots);
    }),
  );
  return loadResult(latencies, failed, (performance.now() - started) / 1000, errors.samples);
}
