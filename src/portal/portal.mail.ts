/**
 * Invite e-mails over SMTP (nodemailer), when SMTP_URL is set: `smtp://user:pass@host:587` or
 * `smtps://…`. Without it there is no mailer and the administrator hands the link over. The link
 * is the only secret in the message; nothing of the e-mail is logged.
 */
import type { Transporter } from "nodemailer";
import type { InviteMailer } from "./portal-user.service.ts";

export function createInviteMailer(smtpUrl: string, from: string): { send: InviteMailer; close(): void } {
  // nodemailer is loaded with the first invite, not carried by every process (the resident-size budget).
  let transport: Promise<Transporter> | undefined;
  return {
    async send(invite) {
      transport ??= import("nodemailer").then((m) => m.default.createTransport(smtpUrl));
      await (await transport).sendMail({
        from,
        to: invite.to,
        subject: `Your ${invite.providerName} account on the Lead Provider portal`,
        text: [
          `Hello ${invite.name},`,
          "",
          `You are invited to the Lead Provider portal for ${invite.providerName}: your leads, requests,`,
          "statistics, webhook and sandbox in one place.",
          "",
          `Choose your password here (the link works once, until ${invite.expiresAt.toUTCString()}):`,
          invite.url,
          "",
          "If you did not expect this, ignore this message.",
        ].join("\n"),
      });
    },
    close: () => void transport?.then((t) => t.close()),
  };
}
