/**
 * A form lead's consent record as both apps show it: the text the person saw and ticked, when,
 * from which page, origin, address and browser, and the fields as sent. Every value is shown as
 * text (React escapes it), whatever markup it holds.
 */
import { Box, Table, TableBody, TableCell, TableRow, Typography } from "@mui/material";
import type { components } from "../../../generated/openapi/schema.ts";

type ConsentRecord = components["schemas"]["ConsentRecord"];

function shownValue(v: unknown): string {
  if (v === null || v === undefined || v === "") return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}

function Rows({ rows, label }: { rows: [string, unknown][]; label: string }) {
  return (
    <Table size="small" aria-label={label} sx={{ "& td": { verticalAlign: "top", overflowWrap: "anywhere" } }}>
      <TableBody>
        {rows.map(([k, v]) => (
          <TableRow key={k}>
            <TableCell component="th" scope="row" sx={{ fontWeight: 600, width: { sm: "30%" } }}>
              {k}
            </TableCell>
            <TableCell>{shownValue(v)}</TableCell>
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
        sx={{ borderLeft: 4, borderColor: "divider", m: 0, my: 1, pl: 2, whiteSpace: "pre-wrap" }}
      >
        {c.text}
      </Box>
      <Rows
        label="Consent"
        rows={[
          ["Accepted", c.accepted ? "Yes: the person ticked the box" : "No"],
          ["Text SHA-256", c.text_sha256],
          ["Received by the service (UTC)", c.accepted_at],
          ["Browser's clock when ticked", c.browser_time],
          ["Page", c.page_url],
          ["Origin", c.origin],
          ["IP address", c.ip_address],
          ["Browser (user agent)", c.user_agent],
          ["TrustedForm certificate", c.trusted_form_cert_url],
          ["Jornaya LeadiD", c.jornaya_lead_id],
        ]}
      />
      <Typography component="h2" variant="h6" sx={{ mt: 3 }}>
        The fields as sent
      </Typography>
      <Rows label="Fields as sent" rows={Object.entries(c.fields)} />
    </>
  );
}
