/** Request ids: every response carries one, taken from a well-formed X-Request-Id or made here. */
import { randomUUID } from "node:crypto";
import type { AnyRequest, AnyResponse } from "./server.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accepts a well-formed incoming X-Request-Id, else makes one; echoes it on the response. */
export function assignRequestId(req: AnyRequest, res: AnyResponse): string {
  const incoming = req.headers["x-request-id"];
  const id = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  req.headers["x-request-id"] = id;
  res.setHeader("X-Request-Id", id);
  return id;
}
