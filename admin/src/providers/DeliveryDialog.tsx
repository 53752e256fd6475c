import {
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  TableCell,
  TableRow,
  Typography,
} from "@mui/material";
import { DataTable } from "../../../ui/src/components/DataTable.tsx";
import { num, relative, when } from "../../../ui/src/format.ts";
import type { Schemas } from "../api.ts";

type DeliveryDetail = Schemas["WebhookDeliveryDetail"];

/** One delivery's attempts: status, latency and error of each. */
export function DeliveryDialog({ detail, onClose }: { detail: DeliveryDetail | null; onClose: () => void }) {
  return (
    <Dialog open={detail !== null} onClose={onClose} aria-labelledby="delivery-title" fullWidth maxWidth="md">
      <DialogTitle id="delivery-title">Delivery {detail?.id}</DialogTitle>
      <DialogContent>
        {detail && (
          <>
            <Typography variant="body2" gutterBottom>
              {detail.type} · {detail.state} · event <code>{detail.event_id}</code>
              {detail.order_number ? ` · lead ${detail.order_number}` : ""}
              {detail.next_attempt_at ? ` · next attempt ${relative(detail.next_attempt_at)}` : ""}
            </Typography>
            {detail.attempt_log.length === 0 ? (
              <Typography variant="body2">No attempt yet.</Typography>
            ) : (
              <DataTable label={`Attempts of delivery ${detail.id}`} columns={["Attempt", "When", "Answer", "Latency"]}>
                {detail.attempt_log.map((a) => (
                  <TableRow key={`${a.attempt}-${a.at}`}>
                    <TableCell>{a.attempt}</TableCell>
                    <TableCell>{when(a.at)}</TableCell>
                    <TableCell>{a.error ?? `HTTP ${a.status_code}`}</TableCell>
                    <TableCell>{num(a.latency_ms)} ms</TableCell>
                  </TableRow>
                ))}
              </DataTable>
            )}
          </>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Close</Button>
      </DialogActions>
    </Dialog>
  );
}
