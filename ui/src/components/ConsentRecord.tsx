/**
 * A form lead's consent record as both apps show it: the text the person saw and ticked, when,
 * from which page, origin, address and browser, and the fields as sent. Every value is shown as
 * text (React escapes it), whatever markup it holds.
 */
import { Box, Table, TableBody, TableCell, TableRow, Typography } from "@mui/material";
import type { ReactNode } from "react";
import type { components } from "../../../generated/openapi/schema.ts";
import { when } from "../format.ts";

type ConsentRecord = components["schemas"]["ConsentRecord"];

function shownValue(v: unknown): ReactNode {
  if (v === null || v === undefined || v === "") return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** The browser's clock in the viewer's time zone, and the exact text it sent (evidence, not re-written). */
function BrowserTime({ sent }: { sent: string | null }) {
  if (sent === null || sent === "") return "—";
  const parsed = Date.parse(sent);
  if (Number.isNaN(parsed)) return <code>{sent}</code>;
  return (
    <>
      {when(sent)} (sent as <code>{sent}</code>)
    </>
  );
}

function Rows({ rows, label }: { rows: [string, ReactNode][]; label: string }) {
  return (
    <Table size="small" aria-label={label} sx={{ "& td": { verticalAlign: "top", overflowWrap: "anywhere" } }}>
      <TableBody>
        {rows.map(([k, v]) => (
          <TableRow key={k}>
            <TableCell component="th" scope="row" sx={{ fontWeight: 600, width: { sm: "30%" } }}>
              {k}
            </TableCell>
            <TableCell>{v}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

export function ConsentRecordView({ record: c }: { record: ConsentRecord }) {
  return (
    <>
      <Typography component="h2" variant="h6" sx={{ mt: 2 }}>
        The text the person saw and ticked
      </Typography>
      <Box
        component="blockquote"
        data-testid="consent-text"
        sx={{
          borderLeft: 4,
          borderColor: "divider",
          m: 0,
          my: 1,
          pl: 2,
          whiteSpace: "pre-wrap",
          overflowWrap: "anywhere",
        }}
      >
        {c.text}
      </Box>
      <Rows
        label="Consent"
        rows={[
          ["Accepted", c.accepted ? "Yes: the person ticked the box" : "No"],
          ["Text SHA-256", shownValue(c.text_sha256)],
          ["Received by the service", when(c.accepted_at)],
          ["Browser's clock when ticked", <BrowserTime key="browser-time" sent={c.browser_time} />],
          ["Page", shownValue(c.page_url)],
          ["Origin", shownValue(c.origin)],
          ["IP address", shownValue(c.ip_address)],
          ["Browser (user agent)", shownValue(c.user_agent)],
          ["TrustedForm certificate", shownValue(c.trusted_form_cert_url)],
          ["Jornaya LeadiD", shownValue(c.jornaya_lead_id)],
        ]}
      />
      <Typography component="h2" variant="h6" sx={{ mt: 3 }}>
        The fields as sent
      </Typography>
      <Rows label="Fields as sent" rows={Object.entries(c.fields).map(([k, v]) => [k, shownValue(v)])} />
    </>
  );
}
