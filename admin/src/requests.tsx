/**
 * The request log across providers: search by request id (paste the id from a provider's error
 * and land on its entry), filter by provider, outcome, code, mode and time; the detail shows the
 * masked body, the problem and links to the provider and the lead.
 */
import { Chip, type Theme, useMediaQuery } from "@mui/material";
import { useEffect, useRef } from "react";
import {
  AutocompleteInput,
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
  TextInput,
  useListContext,
  useRecordContext,
  useRedirect,
} from "react-admin";
import { Link } from "react-router-dom";
import { CursorList } from "../../ui/src/components/CursorList.tsx";
import { RecordHeading } from "../../ui/src/components/PageHeading.tsx";
import { RowLink } from "../../ui/src/components/RowLink.tsx";
import { modeLabel, OUTCOMES, outcomeLabel, ProblemAlert, RequestBody } from "../../ui/src/components/requests.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { WhenField } from "../../ui/src/components/WhenField.tsx";
import { when, yourTime } from "../../ui/src/format.ts";
import { ListActions } from "./listActions.tsx";

const MODES = [
  { id: "true", name: "Live" },
  { id: "false", name: "Test" },
];

const filters = [
  <SearchInput key="request_id" source="request_id" alwaysOn placeholder="Request id" />,
  <ReferenceInput key="provider_id" source="provider_id" reference="providers" alwaysOn>
    <AutocompleteInput label="Provider" optionText="name" />
  </ReferenceInput>,
  <SelectInput key="outcome" source="outcome" choices={OUTCOMES} alwaysOn />,
  <TextInput key="code" source="code" label="Problem code" />,
  <SelectInput key="livemode" source="livemode" label="Mode" choices={MODES} />,
  <TextInput key="external_id" source="external_id" label="External id" />,
  <TextInput key="client_ip" source="client_ip" label="Client address" />,
  <DateTimeInput key="created_after" source="created_after" label={yourTime("After")} />,
  <DateTimeInput key="created_before" source="created_before" label={yourTime("Before")} />,
];

export function OutcomeChip() {
  const record = useRecordContext();
  if (!record) return null;
  const { text, colour } = outcomeLabel(record as unknown as { status: number; outcome: string; operation: string });
  return <Chip size="small" variant="outlined" sx={{ color: colour, borderColor: colour }} label={text} />;
}

/** A search by request id that finds exactly one entry opens it. */
function LandOnSearchedRequest() {
  const { filterValues, data, isPending } = useListContext();
  const redirect = useRedirect();
  const landed = useRef<string | undefined>(undefined);
  const searched = filterValues.request_id as string | undefined;
  useEffect(() => {
    if (isPending || !searched || landed.current === searched || data?.length !== 1) return;
    landed.current = searched;
    redirect("show", "requests", data[0]?.id);
  }, [isPending, searched, data, redirect]);
  return null;
}

export function RequestList() {
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down("sm"));
  return (
    <CursorList
      filters={filters}
      sort={{ field: "created_at", order: "DESC" }}
      title="Request log"
      actions={<ListActions />}
      times
    >
      <LandOnSearchedRequest />
      {small ? (
        <SimpleList
          primaryText={(e) => `${outcomeLabel(e).text}${e.code ? ` · ${e.code}` : ""}`}
          secondaryText={(e) => `${modeLabel(e.livemode)} · ${e.operation}`}
          tertiaryText={(e) => when(e.created_at)}
          linkType="show"
        />
      ) : (
        <Datagrid rowClick="show" bulkActionButtons={false}>
          <RowLink source="created_at" label="When" sortable={false} render={(e) => when(e.created_at)} />
          <ReferenceField source="provider_id" reference="providers" link={false} sortable={false} emptyText="—" />
          <FunctionField label="Mode" render={(e) => modeLabel(e.livemode)} />
          <TextField source="operation" sortable={false} />
          <FunctionField label="Outcome" render={() => <OutcomeChip />} />
          <TextField source="code" emptyText="—" sortable={false} />
          <TextField source="external_id" label="External id" emptyText="—" sortable={false} />
          <NumberField source="duration_ms" label="ms" sortable={false} />
        </Datagrid>
      )}
    </CursorList>
  );
}

function LeadLink() {
  const record = useRecordContext();
  if (!record?.lead_id) return <span>—</span>;
  return <Link to={`/leads/${record.lead_id}/show`}>Lead {record.lead_id}</Link>;
}

export function RequestShow() {
  return (
    <Show title="Request">
      <RecordHeading />
      <TimeZoneNote />
      <SimpleShowLayout sx={{ overflowWrap: "anywhere" }}>
        <TextField source="request_id" label="Request id" />
        <WhenField source="created_at" label="When" />
        <ReferenceField
          source="provider_id"
          reference="providers"
          emptyText="— (no provider: refused before a key named one)"
        />
        <FunctionField label="Mode" render={(e) => modeLabel(e.livemode)} />
        <TextField source="operation" />
        <FunctionField label="Outcome" render={() => <OutcomeChip />} />
        <TextField source="rpc_code" label="RPC code" emptyText="—" />
        <FunctionField label="Problem" render={() => <ProblemAlert />} />
        <TextField source="external_id" label="External id" emptyText="—" />
        <FunctionField label="Lead" render={() => <LeadLink />} />
        <TextField source="protocol" />
        <NumberField source="duration_ms" label="Duration (ms)" />
        <TextField source="client_ip" label="Client address" emptyText="—" />
        <TextField source="key_hint" label="Key (last 4)" emptyText="—" />
        <TextField source="user_agent" label="User agent" emptyText="—" />
        <FunctionField label="Body as received (personal data masked)" render={() => <RequestBody />} />
      </SimpleShowLayout>
    </Show>
  );
}
