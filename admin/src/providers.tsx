/** Providers: list, create, edit, and the detail page with keys, usage and webhooks. */
import { Button, type Theme, useMediaQuery } from "@mui/material";
import {
  BooleanField,
  BooleanInput,
  Create,
  Datagrid,
  DateField,
  Edit,
  EditButton,
  email,
  List,
  maxValue,
  minValue,
  NullableBooleanInput,
  NumberField,
  NumberInput,
  regex,
  required,
  SaveButton,
  SearchInput,
  Show,
  SimpleForm,
  SimpleList,
  SimpleShowLayout,
  TextField,
  TextInput,
  Toolbar,
  TopToolbar,
  useRecordContext,
} from "react-admin";
import { Link } from "react-router-dom";
import { IntakePanel } from "./intakePanel.tsx";
import { DeactivateButton, KeyPanel, UsagePanel, WebhookPanel } from "./providerPanels.tsx";

const filters = [
  <SearchInput key="q" source="q" alwaysOn placeholder="Search by name" />,
  <NullableBooleanInput key="is_active" source="is_active" label="Active" />,
];

export function ProviderList() {
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down("sm"));
  return (
    <List filters={filters} sort={{ field: "id", order: "ASC" }} perPage={25}>
      {small ? (
        <SimpleList
          primaryText={(p) => p.name}
          secondaryText={(p) => `${p.is_active ? "Active" : "Inactive"} · ${p.rate_limit_per_minute}/min`}
          linkType="show"
        />
      ) : (
        <Datagrid rowClick="show" bulkActionButtons={false}>
          <NumberField source="id" sortable={false} />
          <TextField source="name" sortable={false} />
          <TextField source="contact_email" sortable={false} emptyText="—" />
          <BooleanField source="is_active" label="Active" sortable={false} />
          <NumberField source="rate_limit_per_minute" label="Per minute" sortable={false} />
          <NumberField source="rate_limit_per_day" label="Per day" sortable={false} />
          <DateField source="created_at" showTime sortable={false} />
          <EditButton />
        </Datagrid>
      )}
    </List>
  );
}

const limits = {
  rate_limit_per_minute: [minValue(1), maxValue(100_000)],
  rate_limit_per_day: [minValue(1), maxValue(10_000_000)],
};
const url = regex(/^https?:\/\/\S+$/, "Enter an http(s) URL");

function ProviderFields({ creating }: { creating: boolean }) {
  return (
    <>
      <TextInput source="name" validate={[required()]} fullWidth />
      <TextInput source="contact_email" type="email" validate={[email()]} fullWidth />
      {!creating && <BooleanInput source="is_active" label="Active" />}
      <NumberInput source="rate_limit_per_minute" label="Requests per minute" validate={limits.rate_limit_per_minute} />
      <NumberInput source="rate_limit_per_day" label="Requests per day" validate={limits.rate_limit_per_day} />
      <TextInput source="webhook_url" label="Webhook URL" validate={[url]} fullWidth />
      <TextInput source="notes" multiline minRows={2} fullWidth />
    </>
  );
}

export function ProviderCreate() {
  return (
    <Create redirect="show">
      <SimpleForm>
        <ProviderFields creating />
      </SimpleForm>
    </Create>
  );
}

/** Save only: providers are never deleted (deactivate them instead). */
const SaveOnly = () => (
  <Toolbar>
    <SaveButton />
  </Toolbar>
);

export function ProviderEdit() {
  return (
    <Edit mutationMode="pessimistic" redirect="show">
      <SimpleForm toolbar={<SaveOnly />}>
        <ProviderFields creating={false} />
      </SimpleForm>
    </Edit>
  );
}

/** Links to the provider's request log and its statistics on the dashboard. */
function ProviderLinks() {
  const record = useRecordContext();
  if (!record) return null;
  return (
    <>
      <Button
        component={Link}
        to={`/requests?filter=${encodeURIComponent(JSON.stringify({ provider_id: record.id }))}`}
        size="small"
      >
        Requests
      </Button>
      <Button component={Link} to={`/?provider_id=${record.id}`} size="small">
        Stats
      </Button>
    </>
  );
}

function ShowActions() {
  return (
    <TopToolbar>
      <ProviderLinks />
      <EditButton />
      <DeactivateButton />
    </TopToolbar>
  );
}

function Panels() {
  const record = useRecordContext();
  if (!record) return null;
  return (
    <>
      <KeyPanel mode="live" />
      <KeyPanel mode="test" />
      <UsagePanel />
      <IntakePanel />
      <WebhookPanel />
    </>
  );
}

export function ProviderShow() {
  return (
    <Show actions={<ShowActions />}>
      <SimpleShowLayout>
        <TextField source="name" />
        <TextField source="contact_email" emptyText="—" />
        <BooleanField source="is_active" label="Active" />
        <NumberField source="rate_limit_per_minute" label="Requests per minute" />
        <NumberField source="rate_limit_per_day" label="Requests per day" />
        <TextField source="webhook_url" label="Webhook URL" emptyText="—" />
        <TextField source="notes" emptyText="—" />
        <DateField source="created_at" showTime />
        <DateField source="updated_at" showTime />
      </SimpleShowLayout>
      <Panels />
    </Show>
  );
}
