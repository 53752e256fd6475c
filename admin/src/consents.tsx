/**
 * A form lead's consent record at /admin/consents/:id: what the person saw and ticked, when, from
 * which page, origin, address and browser, and the fields as they sent them. A page of its own,
 * without the console's frame, that prints as a clean document (the buttons are not printed).
 */
import { Alert, Box, Button, Stack, Table, TableBody, TableCell, TableRow, Typography } from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { useAuthenticated } from "react-admin";
import { Link, useParams } from "react-router-dom";
import { api, data, type Schemas } from "./api.ts";

const NO_PRINT = { "@media print": { display: "none" } };

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

export function ConsentRecordPage() {
  useAuthenticated();
  const { id = "" } = useParams();
  const record = useQuery({
    queryKey: ["consent", id],
    queryFn: () => data(api.GET("/api/v1/admin/consents/{consent_id}/", { params: { path: { consent_id: id } } })),
  });
  const c: Schemas["ConsentRecord"] | undefined = record.data;
  return (
    <Box component="main" sx={{ p: { xs: 2, sm: 4 }, maxWidth: 900, mx: "auto", "@media print": { p: 0 } }}>
      <Stack direction="row" spacing={1} sx={{ mb: 2, ...NO_PRINT }}>
        {c && (
          <Button component={Link} to={`/leads/${c.lead_id}/show`}>
            Back to lead {c.order_number}
          </Button>
        )}
        <Button variant="contained" onClick={() => window.print()} disabled={!c}>
          Print
        </Button>
      </Stack>
      <Typography component="h1" variant="h5" gutterBottom>
        Consent record {id}
      </Typography>
      {record.error && <Alert severity="error">{record.error.message}</Alert>}
      {c && (
        <>
          <Typography variant="body2" gutterBottom>
            Lead {c.order_number} ({c.external_id}), {c.livemode ? "live" : "test"}; given through the drop-in form,
            version {c.form_version}.
          </Typography>
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
      )}
    </Box>
  );
}
