/**
 * The provider's request log: every create and read with its outcome, why a lead was refused,
 * and the body as received (personal data masked). Search by request id lands on the entry.
 */
import { Button, TextField as MuiTextField, Stack, type Theme, useMediaQuery } from "@mui/material";
import { type FormEvent, useState } from "react";
import {
  Datagrid,
  FunctionField,
  NumberField,
  SelectInput,
  Show,
  SimpleList,
  SimpleShowLayout,
  TextField,
  TextInput,
  useNotify,
  useRedirect,
} from "react-admin";
import { useNavigate, useSearchParams } from "react-router-dom";
import { CursorList } from "../../ui/src/components/CursorList.tsx";
import { RecordHeading } from "../../ui/src/components/PageHeading.tsx";
import { ItemLink, RowLink } from "../../ui/src/components/RowLink.tsx";
import { OUTCOMES, ProblemAlert, RequestBody, refusalSummary } from "../../ui/src/components/requests.tsx";
import { Scrolls } from "../../ui/src/components/Scrolls.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { WhenField } from "../../ui/src/components/WhenField.tsx";
import { when } from "../../ui/src/format.ts";
import { MODE_CHOICES } from "./leads.tsx";

const filters = [
  <SelectInput key="mode" source="mode" label="Mode" choices={MODE_CHOICES} alwaysOn />,
  <SelectInput key="outcome" source="outcome" choices={OUTCOMES} alwaysOn />,
  <TextInput key="external_id" source="external_id" label="External id" />,
];

/** Paste a request id (from X-Request-Id or an error body) to open its entry. */
function FindRequest() {
  const navigate = useNavigate();
  const [id, setId] = useState("");
  const [mode, setMode] = useState("live");
  function submit(e: FormEvent) {
    e.preventDefault();
    if (id.trim()) navigate(`/requests/${encodeURIComponent(id.trim())}/show${mode === "test" ? "?mode=test" : ""}`);
  }
  return (
    <Stack component="form" direction="row" spacing={1} onSubmit={submit} sx={{ p: 1 }} flexWrap="wrap" useFlexGap>
      <MuiTextField
        size="small"
        label="Request id"
        value={id}
        onChange={(e) => setId(e.target.value)}
        sx={{ minWidth: 260 }}
      />
      <MuiTextField
        size="small"
        select
        label="Key"
        value={mode}
        onChange={(e) => setMode(e.target.value)}
        slotProps={{ select: { native: true } }}
      >
        <option value="live">Live</option>
        <option value="test">Test</option>
      </MuiTextField>
      <Button type="submit" variant="outlined">
        Find
      </Button>
    </Stack>
  );
}

const link = (e: { request_id: string; livemode: boolean | null }) =>
  `/requests/${encodeURIComponent(e.request_id)}/show${e.livemode === false ? "?mode=test" : ""}`;

export function RequestList() {
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down("sm"));
  return (
    <>
      <FindRequest />
      <CursorList filters={filters} filterDefaultValues={{ mode: "live" }} title="Requests" times>
        {small ? (
          <SimpleList
            primaryText={(e) => <ItemLink to={link(e as never)}>{`${e.status} ${e.outcome}`}</ItemLink>}
            secondaryText={(e) => (e.code ? refusalSummary(e) : e.operation)}
            tertiaryText={(e) => when(e.created_at)}
            linkType={false}
          />
        ) : (
          <Scrolls>
            <Datagrid rowClick={(_id, _r, e) => link(e as never)} bulkActionButtons={false}>
              <RowLink
                source="created_at"
                label="When"
                sortable={false}
                to={(e) => link(e as never)}
                render={(e) => when(e.created_at)}
              />
              <TextField source="operation" sortable={false} />
              <NumberField source="status" sortable={false} />
              <TextField source="outcome" sortable={false} />
              <FunctionField label="Why" render={(e) => refusalSummary(e)} />
              <TextField source="external_id" label="External id" emptyText="—" sortable={false} />
              <TextField source="request_id" label="Request id" sortable={false} />
            </Datagrid>
          </Scrolls>
        )}
      </CursorList>
    </>
  );
}

export function RequestShow() {
  const [params] = useSearchParams();
  const notify = useNotify();
  const redirect = useRedirect();
  return (
    <Show
      title="Request"
      queryOptions={{
        meta: { mode: params.get("mode") ?? "live" },
        // The service's own words ("no request … in your log"), not a generic toast.
        onError: (err: Error) => {
          notify(err.message, { type: "error" });
          redirect("list", "requests");
        },
      }}
    >
      <RecordHeading />
      <TimeZoneNote />
      <SimpleShowLayout sx={{ overflowWrap: "anywhere" }}>
        <TextField source="request_id" label="Request id" />
        <WhenField source="created_at" label="When" />
        <TextField source="operation" />
        <NumberField source="status" />
        <TextField source="outcome" />
        <FunctionField label="Problem" render={() => <ProblemAlert empty={<span>—</span>} />} />
        <TextField source="external_id" label="External id" emptyText="—" />
        <NumberField source="duration_ms" label="Duration (ms)" />
        <FunctionField label="Body as received (personal data masked)" render={() => <RequestBody />} />
      </SimpleShowLayout>
    </Show>
  );
}
