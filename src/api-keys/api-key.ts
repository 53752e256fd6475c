/**
 * Provider API keys: `lp_live_` (or `lp_test_` for the sandbox) + 43 base62 characters (32 random bytes) + a 6-character base62
 * CRC32 checksum, GitHub-style, so a typo is caught before any lookup and secret scanners can
 * recognise leaked keys. Keys are stored as an HMAC digest (lookup) and AES-256-GCM ciphertext
 * (so an administrator can view a key again, spec §5 rule 2).
 */
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

export const KEY_MODES = ["live", "test"] as const;
export type KeyMode = (typeof KEY_MODES)[number];
/** `lp_live_` or `lp_test_`: the same length, so the format rules are the same for both. */
export const KEY_PREFIXES: Record<KeyMode, string> = { live: "lp_live_", test: "lp_test_" };
const PREFIX_LENGTH = 8;
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BODY_LENGTH = 43; // 62^43 > 2^256
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32
const KEY_PATTERN = new RegExp(`^lp_(live|test)_[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: bigint, length: number): string {
  let out = "";
  let v = value;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(v % 62n)] + out;
    v /= 62n;
  }
  return out;
}

function checksum(body: string): string {
  return base62(BigInt(crc32(body)), CHECKSUM_LENGTH);
}

export function generateKey(mode: KeyMode = "live"): string {
  const body = base62(BigInt(`0x${randomBytes(32).toString("hex")}`), BODY_LENGTH);
  return `${KEY_PREFIXES[mode]}${body}${checksum(body)}`;
}

/** True when `key` has the shape and a matching checksum: no database needed to say no. */
export function isWellFormedKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(PREFIX_LENGTH, PREFIX_LENGTH + BODY_LENGTH);
  return checksum(body) === key.slice(PREFIX_LENGTH + BODY_LENGTH);
}

/** `lp_live_3kTq…0t2R`: enough to recognise a key, useless to use it. */
export function maskKey(key: string): string {
  return `${key.slice(0, PREFIX_LENGTH + 4)}…${key.slice(-4)}`;
}

export interface KeyCrypto {
  digest(key: string): string;
  encrypt(key: string): string;
  decrypt(ciphertext: string): string;
}

/** Derives the HMAC and encryption keys once from the master secret (HKDF-SHA256). */
export function createKeyCrypto(masterSecret: string): KeyCrypto {
  const derive = (info: string) => Buffer.from(hkdfSync("sha256", masterSecret, "lead-provider-api/v1", info, 32));
  const hmacKey = createSecretKey(derive("api-key-digest")); // imported once, not per digest
  const encKey = derive("api-key-encryption");
  return {
    digest: (key) => createHmac("sha256", hmacKey).update(key).digest("hex"),
    encrypt(key) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", encKey, iv);
      const data = Buffer.concat([cipher.update(key, "utf8"), cipher.final()]);
      return [iv, cipher.getAuthTag(), data].map((b) => b.toString("base64url")).join(".");
    },
    decrypt(ciphertext) {
      const [iv, tag, data] = ciphertext.split(".").map((p) => Buffer.from(p, "base64url"));
      if (!iv || !tag || !data) throw new Error("malformed key ciphertext");
      const decipher = createDecipheriv("aes-256-gcm", encKey, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(data), decipher.final()]).toString("utf8");
    },
  };
}
