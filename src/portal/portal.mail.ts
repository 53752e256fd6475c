/**
 * Invite and password-reset e-mails over SMTP (nodemailer), when SMTP_URL is set: `smtp://user:pass@host:587` or
 * `smtps://…`. Without it there is no mailer and the administrator hands the link over. The link
 * is the only secret in the message; nothing of the e-mail is logged.
 */
import type { Transporter } from "nodemailer";
import type { InviteMailer, ResetMailer } from "./portal-user.service.ts";

export function createInviteMailer(
  smtpUrl: string,
  from: string,
): { send: InviteMailer; sendReset: ResetMailer; close(): void } {
  // nodemailer is loaded with the first message, not carried by every process (the resident-size budget).
  let transport: Promise<Transporter> | undefined;
  const transporter = () => {
    transport ??= import("nodemailer").then((m) => m.default.createTransport(smtpUrl));
    return transport;
  };
  return {
    async send(invite) {
      await (await transporter()).sendMail({
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
    async sendReset(reset) {
      await (await transporter()).sendMail({
        from,
        to: reset.to,
        subject: `Choose a new password for the Lead Provider portal (${reset.providerName})`,
        text: [
          `Hello ${reset.name},`,
          "",
          "Someone, hopefully you, asked to choose a new password for your account on the Lead Provider",
          `portal for ${reset.providerName}.`,
          "",
          `Choose it here (the link works once, until ${reset.expiresAt.toUTCString()}):`,
          reset.url,
          "",
          "Choosing it signs you out everywhere. If you did not ask, ignore this message: your password stays as it is.",
        ].join("\n"),
      });
    },
    close: () => void transport?.then((t) => t.close()),
  };
}
