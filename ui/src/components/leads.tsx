/** How both apps name a lead in a list on a phone: its order number, state and TEST mark, then who it is. */
import { Stack } from "@mui/material";
import type { RaRecord } from "react-admin";
import { StateChip, TestChip } from "./chips.tsx";

export function LeadHeadline({ lead }: { lead: RaRecord }) {
  return (
    <Stack direction="row" spacing={1} alignItems="center" component="span">
      <span>{lead.order_number}</span>
      <StateChip state={lead.state} />
      {!lead.livemode && <TestChip />}
    </Stack>
  );
}

export const leadSubline = (lead: RaRecord): string => `${lead.first_name} ${lead.last_name} · ${lead.external_id}`;
