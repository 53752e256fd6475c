/**
 * Verifies provider API keys. Every refusal is the same `unauthenticated` (`invalid_api_key`), except that a
 * genuine key past its expiry says `expired_api_key`; nothing tells whether a key exists.
 *
 * Lookups are cached for a few seconds (per digest, never the key itself) so a busy provider
 * costs no database round trip per request; rotation and provider changes in this instance
 * drop the cache at once, other instances within `cacheTtlMs`.
 * `last_used_at` is written at most once a minute per key, in batches, off the request path.
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import type { ProviderPrincipal } from "../edge/identity.ts";
import { DomainError } from "../errors.ts";
import { findKeyByDigest, touchKeys } from "./api-key.repository.ts";
import { isWellFormedKey, type KeyCrypto } from "./api-key.ts";

export type { ProviderPrincipal };

type KeyRecord = NonNullable<Awaited<ReturnType<typeof findKeyByDigest>>>;

export interface ApiKeyVerifierDeps {
  readonly db: Kysely<Database>;
  readonly crypto: KeyCrypto;
  readonly now?: () => Date;
  readonly cacheTtlMs?: number;
  readonly touchIntervalMs?: number;
  readonly onTouchError?: (err: unknown) => void;
}

export type ApiKeyVerifier = ReturnType<typeof createApiKeyVerifier>;

export function invalidKey(): DomainError {
  return new DomainError("unauthenticated", "the API key is missing or invalid", { code: "invalid_api_key" });
}

export function createApiKeyVerifier(deps: ApiKeyVerifierDeps) {
  const now = deps.now ?? (() => new Date());
  const ttl = deps.cacheTtlMs ?? 5000;
  const touchInterval = deps.touchIntervalMs ?? 60_000;
  const cache = new Map<string, { record: KeyRecord | null; until: number }>();
  const lastTouched = new Map<number, number>();
  const pendingTouch = new Set<number>();
  let flushing: Promise<void> | undefined;

  // A well-formed key's digest never changes; remembering those of the last few thousand keys
  // seen saves the format check and an HMAC per request. Bounded, in memory only, dropped whole
  // when full; a malformed key is never remembered.
  const digests = new Map<string, string>();
  function digestOf(key: string): string | undefined {
    let digest = digests.get(key);
    if (digest === undefined) {
      if (!isWellFormedKey(key)) return undefined;
      if (digests.size >= 10_000) digests.clear();
      digest = deps.crypto.digest(key);
      digests.set(key, digest);
    }
    return digest;
  }

  async function lookup(digest: string): Promise<KeyRecord | null> {
    const t = Date.now();
    const hit = cache.get(digest);
    if (hit && hit.until > t) return hit.record;
    const record = (await findKeyByDigest(deps.db, digest)) ?? null;
    if (cache.size > 50_000) cache.clear();
    cache.set(digest, { record, until: t + ttl });
    return record;
  }

  function touch(keyId: number): void {
    const t = now().getTime(); // the injected clock: a minute is the service's minute

    if ((lastTouched.get(keyId) ?? 0) + touchInterval > t) return;
    lastTouched.set(keyId, t);
    pendingTouch.add(keyId);
    flushing ??= Promise.resolve().then(async () => {
      const ids = [...pendingTouch];
      pendingTouch.clear();
      try {
        await touchKeys(deps.db, ids, new Date(t));
      } catch (err) {
        deps.onTouchError?.(err);
      } finally {
        flushing = undefined;
      }
    });
  }

  return {
    /** The provider behind `key`, or an `unauthenticated` DomainError. */
    async verify(key: string | undefined): Promise<ProviderPrincipal> {
      const digest = key === undefined ? undefined : digestOf(key);
      if (digest === undefined) throw invalidKey();
      const record = await lookup(digest);
      const at = now().getTime();
      if (!record?.isActive) throw invalidKey();
      if (record.revokedAt !== null && new Date(record.revokedAt).getTime() <= at) throw invalidKey();
      if (record.expiresAt !== null && new Date(record.expiresAt).getTime() <= at) {
        throw new DomainError("unauthenticated", "the API key has expired", { code: "expired_api_key" });
      }
      touch(record.keyId);
      return {
        providerId: record.providerId,
        livemode: record.mode === "live",
        keyId: record.keyId,
        perMinute: record.perMinute,
        perDay: record.perDay,
      };
    },

    /** Forgets cached lookups of a provider's keys (after rotation or a provider change). */
    forgetProvider(providerId: number): void {
      for (const [digest, entry] of cache) {
        if (entry.record === null || entry.record.providerId === providerId) cache.delete(digest);
      }
    },

    /** Waits for a pending last_used_at write (tests, shutdown). */
    async flush(): Promise<void> {
      await flushing;
    },
  };
}
