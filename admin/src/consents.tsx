/**
 * A form lead's consent record at /admin/consents/:id: what the person saw and ticked, when, from
 * which page, origin, address and browser, and the fields as they sent them. A page of its own,
 * without the console's frame, that prints as a clean document (the buttons are not printed).
 */
import { Alert, Box, Button, Stack, Typography } from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { useAuthenticated } from "react-admin";
import { Link, useParams } from "react-router-dom";
import { ConsentRecordView } from "../../ui/src/components/ConsentRecord.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { api, data, type Schemas } from "./api.ts";

const NO_PRINT = { "@media print": { display: "none" } };

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
      <TimeZoneNote />
      {record.error && <Alert severity="error">{record.error.message}</Alert>}
      {c && (
        <>
          <Typography variant="body2" gutterBottom>
            Lead {c.order_number} ({c.external_id}), {c.livemode ? "live" : "test"}; given through the drop-in form,
            version {c.form_version}.
          </Typography>
          <ConsentRecordView record={c} />
        </>
      )}
    </Box>
  );
}
