/** Leads across providers: the filtered list, and the detail page with moves through the workflow service. */
import { Code, ConnectError } from "@connectrpc/connect";
import { Alert, Button, Chip, Stack, type Theme, Typography, useMediaQuery } from "@mui/material";
import { useState } from "react";
import {
  ArrayField,
  AutocompleteInput,
  BooleanField,
  BooleanInput,
  Datagrid,
  DateTimeInput,
  FunctionField,
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
import { ConfirmDialog } from "../../ui/src/components/ConfirmDialog.tsx";
import { CursorList } from "../../ui/src/components/CursorList.tsx";
import { StateChip, TestBanner, TestChip } from "../../ui/src/components/chips.tsx";
import { LeadHeadline, leadSubline } from "../../ui/src/components/leads.tsx";
import { RecordHeading } from "../../ui/src/components/PageHeading.tsx";
import { RowLink } from "../../ui/src/components/RowLink.tsx";
import { Scrolls } from "../../ui/src/components/Scrolls.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { WhenField } from "../../ui/src/components/WhenField.tsx";
import { money, when, yourTime } from "../../ui/src/format.ts";
import { duplicateLabel } from "../../ui/src/labels.ts";
import { workflow } from "./api.ts";
import { leadForCsv } from "./csv.ts";
import { ListActions } from "./listActions.tsx";
import { LeadReturnPanel } from "./returns.tsx";

/** Where a lead came in: the Public API over REST, the drop-in form, or gRPC (`null`: before sources were recorded). */
const SOURCES: Record<string, string> = { api: "Public API (REST)", form: "Drop-in form", grpc: "Public API (gRPC)" };

const STATES = [
  { id: "LEAD", name: "LEAD" },
  { id: "QUOTE", name: "QUOTE" },
  { id: "ORDER", name: "ORDER" },
];

const filters = [
  <SearchInput key="q" source="q" alwaysOn placeholder="Name, email, phone, external id or order number" />,
  <ReferenceInput key="provider_id" source="provider_id" reference="providers">
    <AutocompleteInput label="Provider" optionText="name" />
  </ReferenceInput>,
  <SelectInput key="state" source="state" choices={STATES} />,
  <DateTimeInput key="created_after" source="created_after" label={yourTime("Created after")} />,
  <DateTimeInput key="created_before" source="created_before" label={yourTime("Created before")} />,
  <BooleanInput key="include_test" source="include_test" label="Include test leads" />,
  <BooleanInput key="duplicate" source="duplicate" label="Duplicates only" />,
];

/** A lead's duplicate badge: what it matched, and a link to the original (any provider's: this is the back office). */
function DuplicateBadge({ link }: { link: boolean }) {
  const record = useRecordContext();
  const d = record?.duplicate;
  if (!d) return null;
  const label = duplicateLabel(d.matched_on as string[]);
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
    <CursorList
      filters={filters}
      sort={{ field: "id", order: "DESC" }}
      actions={<ListActions exportRow={leadForCsv} />}
      times
    >
      {small ? (
        <SimpleList
          primaryText={(l) => <LeadHeadline lead={l} />}
          secondaryText={leadSubline}
          tertiaryText={(l) => when(l.created_at)}
          linkType="show"
        />
      ) : (
        <Datagrid rowClick="show" bulkActionButtons={false}>
          <RowLink source="order_number" label="Order number" sortable={false} />
          <TextField source="external_id" sortable={false} />
          <ReferenceField source="provider_id" reference="providers" link="show" sortable={false} />
          <FunctionField label="State" render={(l) => <StateChip state={l.state} />} />
          <TextField source="lead_status" sortable={false} />
          <FunctionField label="Customer" render={(l) => `${l.first_name} ${l.last_name}`} />
          <FunctionField label="Mode" render={(l) => (l.livemode ? "Live" : <TestChip />)} />
          <FunctionField label="Duplicate" render={() => <DuplicateBadge link={false} />} />
          <WhenField source="created_at" label="Created" sortable={false} />
        </Datagrid>
      )}
    </CursorList>
  );
}

/** The one move each state allows, and why the others are not offered. */
const NEXT: Record<string, { to: LeadState; name: string; event: string } | undefined> = {
  LEAD: { to: LeadState.QUOTE, name: "QUOTE", event: "lead.quoted" },
  QUOTE: { to: LeadState.ORDER, name: "ORDER", event: "lead.ordered" },
};
const WHY_NOT: Record<string, string> = {
  LEAD: "A lead in LEAD moves to QUOTE first; ORDER comes after QUOTE.",
  QUOTE: "This lead is quoted: it can move on to ORDER only.",
  ORDER: "This lead is an order: it cannot move further.",
};

/**
 * Moves the lead over Connect (LeadWorkflowService.TransitionLead) after a confirmation that says
 * the provider is told; refusals are shown in the service's words.
 */
function MoveButtons() {
  const record = useRecordContext();
  const notify = useNotify();
  const refresh = useRefresh();
  const [refusal, setRefusal] = useState<string | null>(null);
  const [asking, setAsking] = useState<{ to: LeadState; name: string; event: string } | null>(null);
  const [busy, setBusy] = useState(false);
  if (!record) return null;
  const move = async (to: LeadState, name: string) => {
    setRefusal(null);
    setBusy(true);
    try {
      const { changed } = await workflow.transitionLead({ leadId: BigInt(record.id), toState: to });
      notify(changed ? `Lead moved to ${name}; the provider is notified` : `The lead is already in ${name}`, {
        type: "success",
      });
      refresh();
    } catch (err) {
      const message = err instanceof ConnectError ? err.rawMessage : String(err);
      if (err instanceof ConnectError && err.code === Code.FailedPrecondition) setRefusal(message);
      else notify(message, { type: "error" });
    } finally {
      setBusy(false);
      setAsking(null);
    }
  };
  const next = NEXT[record.state as string];
  const hint = WHY_NOT[record.state as string];
  return (
    <Stack spacing={1} sx={{ p: 1 }}>
      <Stack direction="row" spacing={1} flexWrap="wrap" useFlexGap alignItems="center">
        {(["QUOTE", "ORDER"] as const).map((name) => {
          const allowed = next?.name === name;
          return (
            <Button
              key={name}
              variant="contained"
              disabled={!allowed}
              aria-describedby="move-hint"
              onClick={() => next && setAsking(next)}
            >
              Move to {name}
            </Button>
          );
        })}
      </Stack>
      {hint && (
        <Typography id="move-hint" variant="body2" color="text.secondary">
          {hint}
        </Typography>
      )}
      {refusal && (
        <Alert severity="warning" role="alert">
          {refusal}
        </Alert>
      )}
      <ConfirmDialog
        open={asking !== null}
        title={`Move ${record.order_number} to ${asking?.name ?? ""}?`}
        confirm={`Move to ${asking?.name ?? ""}`}
        busy={busy}
        onClose={() => setAsking(null)}
        onConfirm={() => asking && void move(asking.to, asking.name)}
      >
        The provider is notified: a <code>{asking?.event}</code> event goes to its events feed and, if it has a webhook,
        to its endpoint. A move cannot be undone from the back office.
      </ConfirmDialog>
    </Stack>
  );
}

function LeadTitle() {
  const record = useRecordContext();
  return <span>Lead {record ? record.order_number : ""}</span>;
}

function TestNotice() {
  const record = useRecordContext();
  return record && record.livemode === false ? <TestBanner what="lead" /> : null;
}

const place = (p: { zip: string; city: string; state: string } | null) => (p ? `${p.city}, ${p.state} ${p.zip}` : "—");

export function LeadShow() {
  return (
    <Show actions={<TopToolbar />} title={<LeadTitle />}>
      <RecordHeading />
      <TimeZoneNote />
      <TestNotice />
      <MoveButtons />
      <LeadReturnPanel />
      <SimpleShowLayout sx={{ overflowWrap: "anywhere" }}>
        <TextField source="order_number" />
        <TextField source="external_id" />
        <ReferenceField source="provider_id" reference="providers" link="show" />
        <FunctionField label="State" render={(l) => <StateChip state={l.state} />} />
        <TextField source="lead_status" />
        <FunctionField label="Mode" render={(l) => (l.livemode ? "Live" : <TestChip />)} />
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
        <FunctionField label="Source" render={(l) => SOURCES[l.source as string] ?? "Not recorded"} />
        <FunctionField
          label="Consent"
          render={(l) =>
            l.consent?.id ? (
              <Link to={`/consents/${l.consent.id}`}>Consent record {l.consent.id}</Link>
            ) : l.consent ? (
              Object.entries(l.consent as Record<string, string | null>)
                .filter(([, v]) => v !== null)
                .map(([k, v]) => `${k}: ${v}`)
                .join(" · ")
            ) : (
              "—"
            )
          }
        />
        <TextField source="company_name" emptyText="—" />
        <FunctionField label="Origin" render={(l) => place(l.origin)} />
        <FunctionField label="Destination" render={(l) => place(l.destination)} />
        <TextField source="estimated_ship_date" />
        <FunctionField label="Shipping" render={(l) => `${l.overseas_type} · ${l.ship_via}`} />
        <TextField source="note_from_shipper" emptyText="—" />
        <ArrayField source="vehicles">
          <Scrolls>
            <Datagrid bulkActionButtons={false} rowClick={false}>
              <NumberField source="year" options={{ useGrouping: false }} />
              <TextField source="make" />
              <TextField source="model" />
              <TextField source="type" />
              <FunctionField label="Tariff" render={(v) => money(v.tariff)} />
              <FunctionField label="Deposit" render={(v) => money(v.deposit)} />
              <FunctionField
                label="Runs"
                render={(v) => (v.vehicle_run === null ? "Not said" : v.vehicle_run ? "Yes" : "No")}
              />
              <TextField source="vin" label="VIN" emptyText="—" />
            </Datagrid>
          </Scrolls>
        </ArrayField>
        <ArrayField source="history">
          <Scrolls>
            <Datagrid bulkActionButtons={false} rowClick={false}>
              <FunctionField label="From" render={(h) => <StateChip state={h.from_state} />} />
              <FunctionField label="To" render={(h) => <StateChip state={h.to_state} />} />
              <TextField source="lead_status" />
              <FunctionField label="When" render={(h) => when(h.changed_at)} />
              <TextField source="actor" label="By" />
            </Datagrid>
          </Scrolls>
        </ArrayField>
        <WhenField source="created_at" label="Created" />
      </SimpleShowLayout>
    </Show>
  );
}
