/**
 * Webhook verification (Standard Webhooks, as the service signs): the signature over
 * `webhook-id.webhook-timestamp.body` with the endpoint's `whsec_…` secret, a timestamp within
 * five minutes, and then the event, typed by the contract's `webhooks`.
 */
import { WebhookVerificationError as SignatureError, Webhook } from "standardwebhooks";
import { WebhookVerificationError } from "./errors.ts";
import type { WebhookEvent } from "./types.ts";

/** Request headers as Fetch (`Headers`), Node (`req.headers`) or a plain object has them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function plainHeaders(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof Headers !== "undefined" && headers instanceof Headers) {
    headers.forEach((value, name) => {
      out[name.toLowerCase()] = value;
    });
    return out;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(" ") : value;
  }
  return out;
}

export class Webhooks {
  /**
   * The event a webhook delivered, once its signature and timestamp verify; throws
   * WebhookVerificationError otherwise. `rawBody` must be the body exactly as received (parse it
   * only afterwards: re-serialised JSON does not verify).
   */
  verify(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
    if (typeof secret !== "string" || !/^whsec_[A-Za-z0-9+/]+=*$/.test(secret)) {
      throw new TypeError("secret must be the endpoint's signing secret, whsec_ followed by base64");
    }
    if (typeof rawBody !== "string" && !(rawBody instanceof Uint8Array)) {
      throw new TypeError("rawBody must be the body as received: a string or bytes");
    }
    if (typeof headers !== "object" || headers === null) throw new TypeError("headers must be the request's headers");
    const body = typeof rawBody === "string" ? rawBody : new TextDecoder("utf-8", { fatal: false }).decode(rawBody);
    let event: unknown;
    try {
      event = new Webhook(secret).verify(body, plainHeaders(headers));
    } catch (err) {
      if (err instanceof SignatureError) throw new WebhookVerificationError(`webhook not verified: ${err.message}`);
      if (err instanceof SyntaxError) throw new WebhookVerificationError("webhook verified, but its body is not JSON");
      throw err;
    }
    if (typeof event !== "object" || event === null || typeof (event as { type?: unknown }).type !== "string") {
      throw new WebhookVerificationError("webhook verified, but its body is not an event");
    }
    return event as WebhookEvent;
  }
}
