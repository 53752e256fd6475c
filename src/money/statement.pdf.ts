/**
 * A month's statement as one PDF document a provider can file (pdfkit, its built-in Helvetica:
 * no font files, nothing fetched): who and which month, the opening balance, the totals per type
 * and account, the closing balance, and the lines (the first MAX_PDF_LINES; the CSV has every one).
 */
import PDFDocument from "pdfkit";
import { type BalanceTransaction, formatMoney, type Statement, TRANSACTION_TYPES } from "./money.ts";

export const MAX_PDF_LINES = 1000;

const TYPE_NAMES: Record<string, string> = {
  lead_purchase: "Leads bought",
  settlement: "Settled (pending to available)",
  return: "Returns",
  adjustment: "Adjustments",
  payout: "Payouts",
};

export function statementPdf(
  s: Statement,
  providerName: string,
  lines: readonly BalanceTransaction[],
  totalLines: number,
): Promise<Buffer> {
  const doc = new PDFDocument({ size: "LETTER", margin: 54, info: { Title: `Statement ${s.month}` } });
  const chunks: Buffer[] = [];
  doc.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve) => doc.on("end", () => resolve(Buffer.concat(chunks))));
  const money = (cents: number) => formatMoney(cents, s.currency);
  const day = (d: Date) => d.toISOString().slice(0, 10);

  doc.font("Helvetica-Bold").fontSize(18).text(`Statement ${s.month}`);
  doc.font("Helvetica").fontSize(10);
  doc.text(`${providerName}${s.livemode ? "" : " (test book)"}`);
  doc.text(
    `Period: ${s.periodStart.toISOString()} to ${s.periodEnd.toISOString()} (${s.timezone}); ${s.status === "closed" ? "closed" : `open until ${s.closesAt.toISOString()}`}`,
  );
  doc.text(`Currency: ${s.currency}`);
  doc.moveDown();

  const row = (label: string, ...values: string[]) => {
    const y = doc.y;
    doc.text(label, 54, y, { width: 220 });
    values.forEach((v, i) => {
      doc.text(v, 280 + i * 100, y, { width: 95, align: "right" });
    });
    doc.x = 54;
    doc.moveDown(0.2);
  };
  doc.font("Helvetica-Bold");
  row("", "Pending", "Available", "Total");
  doc.font("Helvetica");
  row("Opening balance", money(s.pending.openingCents), money(s.available.openingCents), money(s.openingCents));
  for (const type of TRANSACTION_TYPES) {
    row(
      TYPE_NAMES[type] ?? type,
      money(s.pending.totals[type]),
      money(s.available.totals[type]),
      money(s.totals[type]),
    );
  }
  doc.font("Helvetica-Bold");
  row("Closing balance", money(s.pending.closingCents), money(s.available.closingCents), money(s.closingCents));
  doc.font("Helvetica");
  doc.moveDown();
  doc.text(`Lines: ${s.lineCount}`);
  doc.moveDown();

  if (lines.length > 0) {
    doc.font("Helvetica-Bold").text("Lines");
    doc.font("Helvetica").fontSize(8);
    for (const l of lines) {
      const lead = l.lead ? ` ${l.lead.orderNumber} (${l.lead.externalId})` : "";
      doc.text(
        `${day(l.createdAt)}  ${l.type}  ${l.account}  ${money(l.amountCents)}  balance ${money(l.balanceAfterCents)}  ${l.description}${lead}`,
      );
    }
    if (totalLines > lines.length) {
      doc.moveDown().text(`… and ${totalLines - lines.length} more lines: the CSV lists every one.`);
    }
  }
  doc.end();
  return done;
}
