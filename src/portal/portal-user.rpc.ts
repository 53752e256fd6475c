/** Portal users on ProviderService over Connect/gRPC (admin JWT): thin mappings onto the portal user service. */
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type {
  PortalUser as PortalUserMessage,
  ProviderService as ProviderServiceDesc,
} from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { actorOf as actor } from "../rpc/context.ts";
import { ts, tsOpt } from "../rpc/convert.ts";
import type { Invite, PortalUserService } from "./portal-user.service.ts";
import type { PortalUser } from "./portal-user.ts";

type PortalUserMethods = "invitePortalUser" | "listPortalUsers" | "reissuePortalInvite" | "disablePortalUser";

function userMessage(u: PortalUser): Omit<PortalUserMessage, "$typeName"> {
  return {
    id: BigInt(u.id),
    email: u.email,
    name: u.name,
    status: u.status,
    secondFactor: u.secondFactor,
    lastSignInAt: tsOpt(u.lastSignInAt),
    inviteExpiresAt: tsOpt(u.inviteExpiresAt),
    createdAt: ts(u.createdAt),
  };
}

const inviteMessage = (i: Invite) => ({
  user: userMessage(i.user),
  inviteUrl: i.inviteUrl,
  inviteExpiresAt: ts(i.inviteExpiresAt),
  emailed: i.emailed,
});

/** PUBLIC_BASE_URL, else the origin the call was addressed to. */
function baseUrlOf(ctx: HandlerContext, publicBaseUrl: string | undefined): string {
  if (publicBaseUrl) return publicBaseUrl;
  return new URL(ctx.url).origin; // Connect builds it from the request's authority (or Host)
}

export function createPortalUserRpc(
  users: PortalUserService,
  publicBaseUrl: string | undefined,
): Pick<ServiceImpl<typeof ProviderServiceDesc>, PortalUserMethods> {
  return {
    async invitePortalUser(req, ctx) {
      const input = { email: req.email, name: req.name };
      return inviteMessage(await users.invite(actor(ctx), req.id, input, baseUrlOf(ctx, publicBaseUrl)));
    },
    async listPortalUsers(req) {
      return { users: (await users.list(req.id)).map(userMessage) };
    },
    async reissuePortalInvite(req, ctx) {
      return inviteMessage(await users.reinvite(actor(ctx), req.id, req.userId, baseUrlOf(ctx, publicBaseUrl)));
    },
    async disablePortalUser(req, ctx) {
      return { user: userMessage(await users.disable(actor(ctx), req.id, req.userId)) };
    },
  };
}
