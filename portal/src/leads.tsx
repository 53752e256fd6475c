/**
 * The provider's leads, live or test: searched like the back office's (any part of a name, email,
 * phone, external id or order number), by state and sub-source, exported as CSV as filtered; and
 * one lead with its history.
 */
import DownloadIcon from "@mui/icons-material/Download";
import { Alert, Button, type Theme, useMediaQuery } from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import {
  Datagrid,
  FunctionField,
  type RaRecord,
  SelectInput,
  Show,
  SimpleList,
  SimpleShowLayout,
  TextField,
  TextInput,
  TopToolbar,
  useListContext,
  useRecordContext,
} from "react-admin";
import { useSearchParams } from "react-router-dom";
import { ConsentRecordView } from "../../ui/src/components/ConsentRecord.tsx";
import { CursorList } from "../../ui/src/components/CursorList.tsx";
import { StateChip, TestBanner, TestChip } from "../../ui/src/components/chips.tsx";
import { LeadHeadline, leadSubline } from "../../ui/src/components/leads.tsx";
import { RecordHeading } from "../../ui/src/components/PageHeading.tsx";
import { ItemLink, RowLink } from "../../ui/src/components/RowLink.tsx";
import { Scrolls } from "../../ui/src/components/Scrolls.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { WhenField } from "../../ui/src/components/WhenField.tsx";
import { when } from "../../ui/src/format.ts";
import { FIELD_LABELS } from "../../ui/src/labels.ts";
import { api, data, explain } from "./api.ts";
import { allLeads, CSV_MAX_LEADS, leadsCsv } from "./leads-csv.ts";

export const MODE_CHOICES = [
  { id: "live", name: "Live" },
  { id: "test", name: "Test (sandbox)" },
];
const STATE_CHOICES = ["LEAD", "QUOTE", "ORDER"].map((s) => ({ id: s, name: s }));

const filters = [
  <TextInput
    key="q"
    source="q"
    label="Search"
    helperText="Name, email, phone (any format), external id or order number"
    alwaysOn
    resettable
  />,
  <SelectInput key="mode" source="mode" label="Mode" choices={MODE_CHOICES} alwaysOn />,
  <SelectInput key="state" source="state" label="State" choices={STATE_CHOICES} alwaysOn />,
  <TextInput key="sub_id" source="sub_id" label={FIELD_LABELS.sub_id} alwaysOn resettable />,
];

/** Downloads every lead the list's filters match (not only this page) as CSV. */
function ExportCsvButton() {
  const { filterValues } = useListContext();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  async function download() {
    setBusy(true);
    setMessage(null);
    try {
      const { leads, more } = await allLeads(filterValues);
      const a = document.createElement("a");
      a.href = URL.createObjectURL(new Blob([leadsCsv(leads)], { type: "text/csv;charset=utf-8" }));
      a.download = `leads-${filterValues.mode === "test" ? "test" : "live"}.csv`;
      a.click();
      URL.revokeObjectURL(a.href);
      if (more)
        setMessage(
          `Only the newest ${CSV_MAX_LEADS.toLocaleString("en-US")} leads are in the file: narrow the filters.`,
        );
    } catch (err) {
      setMessage(`The CSV could not be made: ${explain(err)}`);
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <Button size="small" startIcon={<DownloadIcon />} onClick={download} disabled={busy}>
        Export CSV
      </Button>
      {message && (
        <Alert severity="warning" sx={{ ml: 1 }}>
          {message}
        </Alert>
      )}
    </>
  );
}

const LeadListActions = () => (
  <TopToolbar>
    <ExportCsvButton />
  </TopToolbar>
);

const leadPath = (l: RaRecord) => `/leads/${encodeURIComponent(l.external_id)}/show${l.livemode ? "" : "?mode=test"}`;

export function LeadList() {
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down("sm"));
  return (
    <CursorList
      filters={filters}
      filterDefaultValues={{ mode: "live" }}
      title="Leads"
      actions={<LeadListActions />}
      times
    >
      {small ? (
        <SimpleList
          primaryText={(l) => (
            <ItemLink to={leadPath(l)}>
              <LeadHeadline lead={l} />
            </ItemLink>
          )}
          secondaryText={(l) => `${leadSubline(l)}${l.sub_id ? ` · ${FIELD_LABELS.sub_id} ${l.sub_id}` : ""}`}
          tertiaryText={(l) => when(l.created_at)}
          linkType={false}
        />
      ) : (
        <Scrolls>
          <Datagrid rowClick={(_id, _r, l) => leadPath(l)} bulkActionButtons={false}>
            <RowLink source="order_number" label="Order number" sortable={false} to={leadPath} />
            <TextField source="external_id" sortable={false} />
            <FunctionField label="State" render={(l) => <StateChip state={l.state} />} />
            <TextField source="lead_status" sortable={false} />
            <TextField source="sub_id" label={FIELD_LABELS.sub_id} emptyText="—" sortable={false} />
            <FunctionField label="Customer" render={(l) => `${l.first_name} ${l.last_name}`} />
            <FunctionField label="Mode" render={(l) => (l.livemode ? "Live" : <TestChip />)} />
            <FunctionField label="Billable" render={(l) => (l.billable ? "Yes" : "No")} />
            <WhenField source="created_at" label="Created" sortable={false} />
          </Datagrid>
        </Scrolls>
      )}
    </CursorList>
  );
}

function History() {
  const lead = useRecordContext();
  if (!lead) return null;
  return (
    <ol>
      {(lead.history as { to_state: string; lead_status: string; changed_at: string; actor: string }[]).map((h) => (
        <li key={`${h.changed_at}-${h.to_state}-${h.lead_status}`}>
          {when(h.changed_at)}: {h.to_state} ({h.lead_status}) by {h.actor}
        </li>
      ))}
    </ol>
  );
}

function TestNotice() {
  const lead = useRecordContext();
  return lead && !lead.livemode ? <TestBanner what="lead" /> : null;
}

const SOURCES: Record<string, string> = {
  api: "The API (REST)",
  form: "Your drop-in form",
  grpc: "The API (gRPC)",
};

/** A form lead's consent record (what the person saw and ticked); for other leads, what was sent. */
function Consent({ lead }: { lead: { consent?: { id?: string | null; consent_text?: string | null } | null } }) {
  const id = lead.consent?.id ?? null;
  const record = useQuery({
    queryKey: ["consent", id],
    enabled: id !== null,
    queryFn: () =>
      data(api.GET("/api/v1/portal/consents/{consent_id}/", { params: { path: { consent_id: id ?? "" } } })),
  });
  if (id === null) return lead.consent?.consent_text ? `Sent with the lead: ${lead.consent.consent_text}` : "None sent";
  if (record.error) return `Consent record ${id} could not be read: ${record.error.message}`;
  if (!record.data) return `Consent record ${id}…`;
  return <ConsentRecordView record={record.data} />;
}

export function LeadShow() {
  const [params] = useSearchParams();
  return (
    <Show queryOptions={{ meta: { mode: params.get("mode") ?? "live" } }} title="Lead">
      <RecordHeading />
      <TimeZoneNote />
      <SimpleShowLayout>
        <TestNotice />
        <TextField source="order_number" />
        <TextField source="external_id" />
        <FunctionField label="State" render={(l) => <StateChip state={l.state} />} />
        <TextField source="lead_status" />
        <FunctionField
          label="Customer"
          render={(l) => `${l.first_name} ${l.last_name} · ${l.email} · ${l.phone_number}`}
        />
        <FunctionField
          label="Route"
          render={(l) =>
            `${l.origin.city}, ${l.origin.state} ${l.origin.zip} → ${l.destination ? `${l.destination.city}, ${l.destination.state} ${l.destination.zip}` : "overseas"}`
          }
        />
        <FunctionField
          label="Vehicles"
          render={(l) =>
            (l.vehicles as { year: number; make: string; model: string }[])
              .map((v) => `${v.year} ${v.make} ${v.model}`)
              .join("; ")
          }
        />
        <FunctionField
          label="Billable"
          render={(l) =>
            l.billable ? "Yes" : !l.livemode ? "No (a test lead)" : l.duplicate ? "No (a duplicate)" : "No"
          }
        />
        <TextField source="sub_id" label={FIELD_LABELS.sub_id} emptyText="None sent" />
        <FunctionField label="Came in through" render={(l) => SOURCES[l.source as string] ?? "Not recorded"} />
        <WhenField source="created_at" label="Created" />
        <FunctionField label="History" render={() => <History />} />
        <FunctionField label="Consent" render={(l) => <Consent lead={l} />} />
      </SimpleShowLayout>
    </Show>
  );
}
