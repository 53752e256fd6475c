/** Leads across providers: the filtered list, and the detail page with moves through the workflow service. */
import { Code, ConnectError } from "@connectrpc/connect";
import { Alert, Button, Chip, Stack, type Theme, useMediaQuery } from "@mui/material";
import { useState } from "react";
import {
  ArrayField,
  AutocompleteInput,
  BooleanField,
  BooleanInput,
  Datagrid,
  DateField,
  DateTimeInput,
  FunctionField,
  List,
  NumberField,
  ReferenceField,
  ReferenceInput,
  SearchInput,
  SelectInput,
  Show,
  SimpleList,
  SimpleShowLayout,
  TextField,
  TopToolbar,
  useNotify,
  useRecordContext,
  useRefresh,
} from "react-admin";
import { Link } from "react-router-dom";
import { LeadState } from "../../generated/proto/leadprovider/v1/lead_pb.ts";
import { workflow } from "./api.ts";

const STATES = [
  { id: "LEAD", name: "LEAD" },
  { id: "QUOTE", name: "QUOTE" },
  { id: "ORDER", name: "ORDER" },
];

const filters = [
  <SearchInput key="q" source="q" alwaysOn placeholder="External id or order number" />,
  <ReferenceInput key="provider_id" source="provider_id" reference="providers">
    <AutocompleteInput label="Provider" optionText="name" />
  </ReferenceInput>,
  <SelectInput key="state" source="state" choices={STATES} />,
  <DateTimeInput key="created_after" source="created_after" label="Created after" />,
  <DateTimeInput key="created_before" source="created_before" label="Created before" />,
  <BooleanInput key="include_test" source="include_test" label="Include test leads" />,
  <BooleanInput key="duplicate" source="duplicate" label="Duplicates only" />,
];

/** A lead's duplicate badge: what it matched, and a link to the original (any provider's: this is the back office). */
function DuplicateBadge({ link }: { link: boolean }) {
  const record = useRecordContext();
  const d = record?.duplicate;
  if (!d) return null;
  const label = `Duplicate (${(d.matched_on as string[]).join(", ")})`;
  return (
    <Stack direction="row" spacing={1} alignItems="center">
      <Chip size="small" variant="outlined" sx={{ color: "#7a3d00", borderColor: "#7a3d00" }} label={label} />
      {link && d.original && (
        <Link to={`/leads/${d.original.id}/show`} onClick={(e) => e.stopPropagation()}>
          Original {d.original.order_number}
        </Link>
      )}
    </Stack>
  );
}

export function LeadList() {
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down("sm"));
  return (
    <List filters={filters} perPage={25} sort={{ field: "id", order: "DESC" }}>
      {small ? (
        <SimpleList
          primaryText={(l) => `${l.order_number} · ${l.state}`}
          secondaryText={(l) => `${l.first_name} ${l.last_name} · ${l.external_id}`}
          linkType="show"
        />
      ) : (
        <Datagrid rowClick="show" bulkActionButtons={false}>
          <TextField source="order_number" sortable={false} />
          <TextField source="external_id" sortable={false} />
          <ReferenceField source="provider_id" reference="providers" link="show" sortable={false} />
          <TextField source="state" sortable={false} />
          <TextField source="lead_status" sortable={false} />
          <FunctionField label="Customer" render={(l) => `${l.first_name} ${l.last_name}`} />
          <BooleanField source="livemode" label="Live" sortable={false} />
          <FunctionField label="Duplicate" render={() => <DuplicateBadge link={false} />} />
          <DateField source="created_at" showTime sortable={false} />
        </Datagrid>
      )}
    </List>
  );
}

/** Moves the lead over Connect (LeadWorkflowService.TransitionLead), showing refusals in the service's words. */
function MoveButtons() {
  const record = useRecordContext();
  const notify = useNotify();
  const refresh = useRefresh();
  const [refusal, setRefusal] = useState<string | null>(null);
  if (!record) return null;
  const move = async (to: LeadState, name: string) => {
    setRefusal(null);
    try {
      const { changed } = await workflow.transitionLead({ leadId: BigInt(record.id), toState: to });
      notify(changed ? `Moved to ${name}` : `Already in ${name}`, { type: "success" });
      refresh();
    } catch (err) {
      const message = err instanceof ConnectError ? err.rawMessage : String(err);
      if (err instanceof ConnectError && err.code === Code.FailedPrecondition) setRefusal(message);
      else notify(message, { type: "error" });
    }
  };
  return (
    <Stack spacing={1} sx={{ p: 1 }}>
      <Stack direction="row" spacing={1}>
        <Button variant="contained" onClick={() => move(LeadState.QUOTE, "QUOTE")} disabled={record.state !== "LEAD"}>
          Move to QUOTE
        </Button>
        <Button variant="contained" onClick={() => move(LeadState.ORDER, "ORDER")} disabled={record.state !== "QUOTE"}>
          Move to ORDER
        </Button>
      </Stack>
      {refusal && (
        <Alert severity="warning" role="alert">
          {refusal}
        </Alert>
      )}
    </Stack>
  );
}

const place = (p: { zip: string; city: string; state: string } | null) => (p ? `${p.city}, ${p.state} ${p.zip}` : "—");

export function LeadShow() {
  return (
    <Show actions={<TopToolbar />}>
      <MoveButtons />
      <SimpleShowLayout>
        <TextField source="order_number" />
        <TextField source="external_id" />
        <ReferenceField source="provider_id" reference="providers" link="show" />
        <TextField source="state" />
        <TextField source="lead_status" />
        <BooleanField source="livemode" label="Live" />
        <BooleanField source="billable" />
        <FunctionField label="Duplicate" render={(l) => (l.duplicate ? <DuplicateBadge link /> : "No")} />
        <FunctionField
          label="Customer"
          render={(l) =>
            `${l.first_name} ${l.last_name} · ${l.email} · ${l.phone_number} (${l.phone_e164 ?? "not parsed"})`
          }
        />
        <TextField source="sub_id" label="Sub-source" emptyText="—" />
        <TextField source="source_url" emptyText="—" />
        <FunctionField
          label="Consent"
          render={(l) =>
            l.consent
              ? Object.entries(l.consent as Record<string, string | null>)
                  .filter(([, v]) => v !== null)
                  .map(([k, v]) => `${k}: ${v}`)
                  .join(" · ")
              : "—"
          }
        />
        <TextField source="company_name" emptyText="—" />
        <FunctionField label="Origin" render={(l) => place(l.origin)} />
        <FunctionField label="Destination" render={(l) => place(l.destination)} />
        <TextField source="estimated_ship_date" />
        <FunctionField label="Shipping" render={(l) => `${l.overseas_type} · ${l.ship_via}`} />
        <TextField source="note_from_shipper" emptyText="—" />
        <ArrayField source="vehicles">
          <Datagrid bulkActionButtons={false} rowClick={false}>
            <NumberField source="year" options={{ useGrouping: false }} />
            <TextField source="make" />
            <TextField source="model" />
            <TextField source="type" />
            <NumberField source="tariff" />
            <NumberField source="deposit" />
            <TextField source="vin" label="VIN" emptyText="—" />
          </Datagrid>
        </ArrayField>
        <ArrayField source="history">
          <Datagrid bulkActionButtons={false} rowClick={false}>
            <TextField source="from_state" emptyText="—" />
            <TextField source="to_state" />
            <TextField source="lead_status" />
            <DateField source="changed_at" showTime />
            <TextField source="actor" />
          </Datagrid>
        </ArrayField>
        <DateField source="created_at" showTime />
      </SimpleShowLayout>
    </Show>
  );
}
