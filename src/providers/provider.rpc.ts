/** ProviderService over Connect/gRPC: thin mappings onto the provider service. */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ApiKeyMode,
  type ApiKeySummary as ApiKeySummaryMessage,
  type Provider as ProviderMessage,
  ProviderSchema,
  type ProviderService as ProviderServiceDesc,
} from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { actorOf as actor } from "../rpc/context.ts";
import { dateOf, optionalText, ts, tsOpt } from "../rpc/convert.ts";
import type { Sandbox } from "../sandbox/sandbox.service.ts";
import type { ProviderService } from "./provider.service.ts";
import type { ApiKeySummary, Provider } from "./provider.ts";

function keyMessage(k: ApiKeySummary): Omit<ApiKeySummaryMessage, "$typeName"> {
  return {
    masked: k.masked,
    createdAt: ts(k.createdAt),
    expiresAt: tsOpt(k.expiresAt),
    lastUsedAt: tsOpt(k.lastUsedAt),
    previousKeyExpiresAt: tsOpt(k.previousKeyExpiresAt),
  };
}

/** The domain's key mode for a proto ApiKeyMode: unset → undefined; an unknown number → its text. */
function modeName(mode: ApiKeyMode): string | undefined {
  if (mode === ApiKeyMode.UNSPECIFIED) return undefined;
  if (mode === ApiKeyMode.LIVE) return "live";
  if (mode === ApiKeyMode.TEST) return "test";
  return String(mode);
}

export function providerMessage(p: Provider): ProviderMessage {
  return create(ProviderSchema, {
    id: BigInt(p.id),
    name: p.name,
    ...(p.contactEmail !== null && { contactEmail: p.contactEmail }),
    isActive: p.isActive,
    rateLimitPerMinute: p.rateLimitPerMinute,
    rateLimitPerDay: p.rateLimitPerDay,
    ...(p.webhookUrl !== null && { webhookUrl: p.webhookUrl }),
    webhookEventTypes: [...(p.webhookEventTypes ?? [])],
    ...(p.notes !== null && { notes: p.notes }),
    createdAt: ts(p.createdAt),
    updatedAt: ts(p.updatedAt),
    ...(p.apiKey && { apiKey: keyMessage(p.apiKey) }),
    ...(p.testApiKey && { testApiKey: keyMessage(p.testApiKey) }),
  });
}

/** The JSON-like provider input the service reads: only the fields the message sets. */
function providerInput(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

/** A subscription message: an empty list is every type (null). */
const eventTypes = (m: { types: string[] } | undefined) =>
  m === undefined ? undefined : m.types.length === 0 ? null : m.types;

/** Proto3 has no null: for the clearable text fields an empty string clears. */
const clearable = (s: string | undefined) => (s === undefined ? undefined : s === "" ? null : s);

type ProviderMethods =
  | "listProviders"
  | "createProvider"
  | "getProvider"
  | "updateProvider"
  | "generateApiKey"
  | "revealApiKey"
  | "revokeApiKey"
  | "purgeTestData";

export function createProviderRpc(
  providers: ProviderService,
  sandbox: Sandbox,
): Pick<ServiceImpl<typeof ProviderServiceDesc>, ProviderMethods> {
  return {
    async listProviders(req) {
      const page = await providers.list({
        page: req.page || undefined,
        pageSize: req.pageSize || undefined,
        search: optionalText(req.search),
        isActive: req.isActive,
      });
      return { count: BigInt(page.count), results: page.providers.map(providerMessage), hasNext: page.hasNext };
    },
    async createProvider(req, ctx) {
      const input = providerInput({
        name: req.name,
        contact_email: req.contactEmail,
        is_active: req.isActive,
        rate_limit_per_minute: req.rateLimitPerMinute,
        rate_limit_per_day: req.rateLimitPerDay,
        webhook_url: req.webhookUrl,
        webhook_event_types: eventTypes(req.webhookEventTypes),
        notes: req.notes,
      });
      return { provider: providerMessage(await providers.create(actor(ctx), input)) };
    },
    async getProvider(req, ctx) {
      const { provider, apiKey, testApiKey } = await providers.get(actor(ctx), req.id);
      return {
        provider: providerMessage(provider),
        ...(apiKey !== null && { apiKeyValue: apiKey }),
        ...(testApiKey !== null && { testApiKeyValue: testApiKey }),
      };
    },
    async revealApiKey(req, ctx) {
      // UNSPECIFIED is a missing mode here: the service names the field.
      const { mode, apiKey } = await providers.revealKey(actor(ctx), req.id, modeName(req.mode));
      return { mode: mode === "test" ? ApiKeyMode.TEST : ApiKeyMode.LIVE, ...(apiKey !== null && { apiKey }) };
    },
    async updateProvider(req, ctx) {
      const input = providerInput({
        name: req.name,
        contact_email: clearable(req.contactEmail),
        is_active: req.isActive,
        rate_limit_per_minute: req.rateLimitPerMinute,
        rate_limit_per_day: req.rateLimitPerDay,
        webhook_url: clearable(req.webhookUrl),
        webhook_event_types: eventTypes(req.webhookEventTypes),
        notes: clearable(req.notes),
      });
      return { provider: providerMessage(await providers.update(actor(ctx), req.id, input)) };
    },
    async generateApiKey(req, ctx) {
      const key = await providers.generateKey(actor(ctx), req.id, {
        mode: modeName(req.mode),
        expiresAt: dateOf(req.expiresAt),
        previousKeyGraceSeconds: req.previousKeyGraceSeconds,
      });
      return {
        apiKey: key.apiKey,
        mode: key.mode === "test" ? ApiKeyMode.TEST : ApiKeyMode.LIVE,
        createdAt: ts(key.createdAt),
        expiresAt: tsOpt(key.expiresAt),
        previousKeyExpiresAt: tsOpt(key.previousKeyExpiresAt),
      };
    },
    async revokeApiKey(req, ctx) {
      return { provider: providerMessage(await providers.revokeKey(actor(ctx), req.id, modeName(req.mode))) };
    },
    async purgeTestData(req, ctx) {
      const { deletedLeads } = await sandbox.purge(actor(ctx), req.id);
      return { deletedLeads: BigInt(deletedLeads) };
    },
  };
}
