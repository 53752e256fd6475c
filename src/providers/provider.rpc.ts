/** ProviderService over Connect/gRPC: thin mappings onto the provider service. */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Provider as ProviderMessage,
  ProviderSchema,
  type ProviderService as ProviderServiceDesc,
} from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { actorOf as actor } from "../rpc/context.ts";
import { dateOf, optionalText, ts, tsOpt } from "../rpc/convert.ts";
import type { ProviderService } from "./provider.service.ts";
import type { Provider } from "./provider.ts";

export function providerMessage(p: Provider): ProviderMessage {
  return create(ProviderSchema, {
    id: BigInt(p.id),
    name: p.name,
    ...(p.contactEmail !== null && { contactEmail: p.contactEmail }),
    isActive: p.isActive,
    rateLimitPerMinute: p.rateLimitPerMinute,
    rateLimitPerDay: p.rateLimitPerDay,
    ...(p.webhookUrl !== null && { webhookUrl: p.webhookUrl }),
    ...(p.notes !== null && { notes: p.notes }),
    createdAt: ts(p.createdAt),
    updatedAt: ts(p.updatedAt),
    ...(p.apiKey && {
      apiKey: {
        masked: p.apiKey.masked,
        createdAt: ts(p.apiKey.createdAt),
        expiresAt: tsOpt(p.apiKey.expiresAt),
        lastUsedAt: tsOpt(p.apiKey.lastUsedAt),
        previousKeyExpiresAt: tsOpt(p.apiKey.previousKeyExpiresAt),
      },
    }),
  });
}

/** The JSON-like provider input the service reads: only the fields the message sets. */
function providerInput(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

/** Proto3 has no null: for the clearable text fields an empty string clears. */
const clearable = (s: string | undefined) => (s === undefined ? undefined : s === "" ? null : s);

type ProviderMethods = "listProviders" | "createProvider" | "getProvider" | "updateProvider" | "generateApiKey";

export function createProviderRpc(
  providers: ProviderService,
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
        notes: req.notes,
      });
      return { provider: providerMessage(await providers.create(actor(ctx), input)) };
    },
    async getProvider(req, ctx) {
      const { provider, apiKey } = await providers.get(actor(ctx), req.id);
      return { provider: providerMessage(provider), ...(apiKey !== null && { apiKeyValue: apiKey }) };
    },
    async updateProvider(req, ctx) {
      const input = providerInput({
        name: req.name,
        contact_email: clearable(req.contactEmail),
        is_active: req.isActive,
        rate_limit_per_minute: req.rateLimitPerMinute,
        rate_limit_per_day: req.rateLimitPerDay,
        webhook_url: clearable(req.webhookUrl),
        notes: clearable(req.notes),
      });
      return { provider: providerMessage(await providers.update(actor(ctx), req.id, input)) };
    },
    async generateApiKey(req, ctx) {
      const key = await providers.generateKey(actor(ctx), req.id, {
        expiresAt: dateOf(req.expiresAt),
        previousKeyGraceSeconds: req.previousKeyGraceSeconds,
      });
      return {
        apiKey: key.apiKey,
        createdAt: ts(key.createdAt),
        expiresAt: tsOpt(key.expiresAt),
        previousKeyExpiresAt: tsOpt(key.previousKeyExpiresAt),
      };
    },
  };
}
