/** The audit log: who did what and when, by provider and actor. */
import { type Theme, useMediaQuery } from "@mui/material";
import {
  AutocompleteInput,
  Datagrid,
  DateField,
  FunctionField,
  List,
  ReferenceInput,
  SimpleList,
  TextField,
  TextInput,
} from "react-admin";

const filters = [
  <ReferenceInput key="provider_id" source="provider_id" reference="providers" alwaysOn>
    <AutocompleteInput label="Provider" optionText="name" />
  </ReferenceInput>,
  <TextInput key="actor" source="actor" label="Actor (JWT sub)" alwaysOn />,
];

const details = (d: Record<string, unknown>) =>
  Object.entries(d ?? {})
    .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(", ");

export function AuditList() {
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down("sm"));
  return (
    <List filters={filters} perPage={25} sort={{ field: "id", order: "DESC" }} title="Audit log">
      {small ? (
        <SimpleList
          primaryText={(e) => e.action}
          secondaryText={(e) => `${e.actor} · ${e.target_type} ${e.target_id}`}
          tertiaryText={(e) => new Date(e.at).toLocaleString()}
          linkType={false}
        />
      ) : (
        <Datagrid bulkActionButtons={false} rowClick={false}>
          <DateField source="at" label="When" showTime sortable={false} />
          <TextField source="actor" sortable={false} />
          <TextField source="action" sortable={false} />
          <FunctionField label="Target" render={(e) => `${e.target_type} ${e.target_id}`} />
          <FunctionField label="Details" render={(e) => details(e.details)} />
        </Datagrid>
      )}
    </List>
  );
}
