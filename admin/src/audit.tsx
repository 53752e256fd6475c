/** The audit log: who did what and when, by provider and actor, with links to what it was done to. */
import { Stack, type Theme, useMediaQuery } from "@mui/material";
import {
  AutocompleteInput,
  Datagrid,
  FunctionField,
  type RaRecord,
  ReferenceInput,
  SimpleList,
  TextField,
  TextInput,
} from "react-admin";
import { Link } from "react-router-dom";
import { CursorList } from "../../ui/src/components/CursorList.tsx";
import { WhenField } from "../../ui/src/components/WhenField.tsx";
import { label, shown, span, when } from "../../ui/src/format.ts";
import { ListActions } from "./listActions.tsx";

const filters = [
  <ReferenceInput key="provider_id" source="provider_id" reference="providers" alwaysOn>
    <AutocompleteInput label="Provider" optionText="name" />
  </ReferenceInput>,
  <TextInput key="actor" source="actor" label="Actor (any part)" alwaysOn />,
];

/** The entry's target, named, as a link to its page. */
function Target({ entry }: { entry: RaRecord }) {
  const path =
    entry.target_type === "provider"
      ? `/providers/${entry.target_id}/show`
      : entry.target_type === "lead"
        ? `/leads/${entry.target_id}/show`
        : undefined;
  const kind =
    entry.target_type === "provider" ? "Provider" : entry.target_type === "lead" ? "Lead" : entry.target_type;
  // Its name (a provider's, a lead's order number and customer) where the service knows it.
  const text = entry.target_name ? String(entry.target_name) : `${kind} ${entry.target_id}`;
  return path ? (
    <Link to={path} onClick={(e) => e.stopPropagation()}>
      {text}
    </Link>
  ) : (
    <span>{text}</span>
  );
}

/** The details in words: each changed field as "Label: before → after", the rest as "Label: value". */
function Details({ details }: { details: Record<string, unknown> }) {
  const {
    changes,
    fields: _fields,
    ...rest
  } = (details ?? {}) as {
    changes?: Record<string, { before: unknown; after: unknown }>;
    fields?: unknown;
  } & Record<string, unknown>;
  const lines = [
    ...Object.entries(changes ?? {}).map(([k, v]) => `${label(k)}: ${shown(v.before)} → ${shown(v.after)}`),
    ...Object.entries(rest).map(([k, v]) =>
      k.endsWith("_seconds") && typeof v === "number"
        ? `${label(k)}: ${v === 0 ? "none (stops at once)" : span(v)}`
        : `${label(k)}: ${shown(v)}`,
    ),
  ];
  return (
    <Stack component="span" spacing={0.25}>
      {lines.map((l) => (
        <span key={l}>{l}</span>
      ))}
    </Stack>
  );
}

export function AuditList() {
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down("sm"));
  return (
    <CursorList
      filters={filters}
      sort={{ field: "id", order: "DESC" }}
      title="Audit log"
      actions={<ListActions />}
      times
    >
      {small ? (
        <SimpleList
          primaryText={(e) => e.action}
          secondaryText={(e) => (
            <span>
              {e.actor} · <Target entry={e} />
            </span>
          )}
          tertiaryText={(e) => when(e.at)}
          linkType={false}
        />
      ) : (
        <Datagrid bulkActionButtons={false} rowClick={false}>
          <WhenField source="at" label="When" sortable={false} />
          <TextField source="actor" sortable={false} />
          <TextField source="action" sortable={false} />
          <FunctionField label="Target" render={(e) => <Target entry={e} />} />
          <FunctionField label="Details" render={(e) => <Details details={e.details} />} />
        </Datagrid>
      )}
    </CursorList>
  );
}
