/** Providers: list, create, edit, and the detail page with keys, usage, intake, terms, money and webhooks. */
import { Box, Button, type Theme, Typography, useMediaQuery } from "@mui/material";
import {
  BooleanField,
  BooleanInput,
  Create,
  Datagrid,
  Edit,
  EditButton,
  email,
  FunctionField,
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
  TabbedShowLayout,
  TabbedShowLayoutTabs,
  TextField,
  TextInput,
  Toolbar,
  TopToolbar,
  useNotify,
  useRecordContext,
  useRedirect,
} from "react-admin";
import { Link } from "react-router-dom";
import { ListHeading, PageHeading, RecordHeading } from "../../ui/src/components/PageHeading.tsx";
import { RowLink } from "../../ui/src/components/RowLink.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { WhenField } from "../../ui/src/components/WhenField.tsx";
import { num, relative } from "../../ui/src/format.ts";
import { ListActions } from "./listActions.tsx";
import { DeactivateButton } from "./providers/DeactivateButton.tsx";
import { FormPanel } from "./providers/FormPanel.tsx";
import { IntakePanel } from "./providers/IntakePanel.tsx";
import { KeyPanel } from "./providers/KeyPanel.tsx";
import { MoneyPanel } from "./providers/MoneyPanel.tsx";
import { PortalUsersPanel } from "./providers/PortalUsersPanel.tsx";
import { TermsPanel } from "./providers/TermsPanel.tsx";
import { UsagePanel } from "./providers/UsagePanel.tsx";
import { WebhookPanel } from "./providers/WebhookPanel.tsx";

const filters = [
  <SearchInput key="q" source="q" alwaysOn placeholder="Search by name" />,
  <NullableBooleanInput key="is_active" source="is_active" label="Active" />,
];

type Activity = {
  leads_this_week: number;
  last_lead_at: string | null;
  webhook_enabled: boolean | null;
  failed_deliveries: number;
  pending_deliveries: number;
};
type KeySummary = { last_used_at: string | null; expires_at: string | null } | null;

/** The live key at a glance: missing, expiring, unused, or when it was last used. */
export function keyHealth(key: KeySummary): { text: string; ok: boolean } {
  if (!key) return { text: "No live key", ok: false };
  if (key.expires_at)
    return { text: `Expires ${relative(key.expires_at)}`, ok: Date.parse(key.expires_at) > Date.now() };
  return key.last_used_at ? { text: `Used ${relative(key.last_used_at)}`, ok: true } : { text: "Never used", ok: true };
}

/** The webhook at a glance: none, disabled, failing or fine. */
export function webhookHealth(a: Activity | undefined): { text: string; ok: boolean } {
  if (!a || a.webhook_enabled === null) return { text: "No webhook", ok: true };
  if (!a.webhook_enabled) return { text: "Webhook disabled", ok: false };
  if (a.failed_deliveries > 0) return { text: `${num(a.failed_deliveries)} failed`, ok: false };
  if (a.pending_deliveries > 0) return { text: `${num(a.pending_deliveries)} pending`, ok: true };
  return { text: "Webhook OK", ok: true };
}

function Health({ h }: { h: { text: string; ok: boolean } }) {
  return (
    <Typography
      component="span"
      variant="body2"
      sx={{ color: h.ok ? "text.primary" : "#b71c1c", fontWeight: h.ok ? 400 : 600 }}
    >
      {h.text}
    </Typography>
  );
}

export function ProviderList() {
  const small = useMediaQuery((theme: Theme) => theme.breakpoints.down("sm"));
  return (
    <>
      <ListHeading />
      <List
        filters={filters}
        sort={{ field: "id", order: "ASC" }}
        perPage={25}
        actions={<ListActions create />}
        exporter={false}
      >
        {small ? (
          <SimpleList
            primaryText={(p) => p.name}
            secondaryText={(p) =>
              `${p.is_active ? "Active" : "Inactive"} · ${num(p.activity?.leads_this_week)} leads this week · ${keyHealth(p.api_key).text} · ${webhookHealth(p.activity).text}`
            }
            linkType="show"
          />
        ) : (
          <Datagrid rowClick="show" bulkActionButtons={false}>
            <NumberField source="id" sortable={false} />
            <RowLink source="name" label="Name" sortable={false} />
            <BooleanField source="is_active" label="Active" sortable={false} />
            <FunctionField label="Leads this week" render={(p) => num(p.activity?.leads_this_week)} />
            <FunctionField label="Last lead" render={(p) => relative(p.activity?.last_lead_at)} />
            <FunctionField label="Live key" render={(p) => <Health h={keyHealth(p.api_key)} />} />
            <FunctionField label="Webhook" render={(p) => <Health h={webhookHealth(p.activity)} />} />
            <FunctionField
              label="Limits"
              render={(p) => `${num(p.rate_limit_per_minute)}/min · ${num(p.rate_limit_per_day)}/day`}
            />
            <EditButton />
          </Datagrid>
        )}
      </List>
    </>
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
  const notify = useNotify();
  const redirect = useRedirect();
  return (
    <Create
      mutationOptions={{
        onSuccess: (p: { id: number; name: string }) => {
          notify(`Provider ${p.name} created`, { type: "success" });
          // A new provider's next step is its key: the Keys tab.
          redirect(`/providers/${p.id}/show/keys`);
        },
      }}
    >
      <PageHeading hidden>New provider</PageHeading>
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
  const notify = useNotify();
  const redirect = useRedirect();
  return (
    <Edit
      mutationMode="pessimistic"
      mutationOptions={{
        onSuccess: (p: { id: number; name: string }) => {
          notify(`Provider ${p.name} saved`, { type: "success" });
          redirect("show", "providers", p.id);
        },
      }}
    >
      <RecordHeading />
      <SimpleForm toolbar={<SaveOnly />}>
        <ProviderFields creating={false} />
      </SimpleForm>
    </Edit>
  );
}

/** Links to the provider's leads, request log and statistics on the dashboard. */
function ProviderLinks() {
  const record = useRecordContext();
  if (!record) return null;
  return (
    <>
      <Button
        component={Link}
        to={`/leads?filter=${encodeURIComponent(JSON.stringify({ provider_id: record.id }))}`}
        size="small"
      >
        Leads
      </Button>
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
    <TopToolbar sx={{ flexWrap: "wrap" }}>
      <ProviderLinks />
      <EditButton />
      <DeactivateButton />
    </TopToolbar>
  );
}

/**
 * The detail page in tabs, each addressable by its path (`/providers/7/show/money`), so a link can
 * open the panel it is about. Tabs scroll sideways on a phone rather than the page; arrow keys move
 * between them and Enter opens one (they are links). Panels sit in a plain `<div>`: a tab puts a
 * label above each child that is a component, and a panel has its own h2.
 */
export function ProviderShow() {
  return (
    <Show actions={<ShowActions />}>
      <RecordHeading />
      <Box sx={{ px: 2 }}>
        <TimeZoneNote />
      </Box>
      <TabbedShowLayout
        tabs={
          <TabbedShowLayoutTabs
            variant="scrollable"
            scrollButtons="auto"
            allowScrollButtonsMobile
            aria-label="Provider sections"
          />
        }
      >
        <TabbedShowLayout.Tab label="Overview">
          <TextField source="name" />
          <TextField source="contact_email" emptyText="—" />
          <BooleanField source="is_active" label="Active" />
          <NumberField source="rate_limit_per_minute" label="Requests per minute" />
          <NumberField source="rate_limit_per_day" label="Requests per day" />
          <TextField source="webhook_url" label="Webhook URL" emptyText="—" />
          <TextField source="notes" emptyText="—" />
          <WhenField source="created_at" label="Created" />
          <WhenField source="updated_at" label="Updated" />
          <div>
            <UsagePanel />
          </div>
        </TabbedShowLayout.Tab>
        <TabbedShowLayout.Tab label="Keys" path="keys">
          <div>
            <KeyPanel mode="live" />
            <KeyPanel mode="test" />
          </div>
        </TabbedShowLayout.Tab>
        <TabbedShowLayout.Tab label="Intake rules" path="intake">
          <div>
            <IntakePanel />
          </div>
        </TabbedShowLayout.Tab>
        <TabbedShowLayout.Tab label="Money" path="money">
          <div>
            <TermsPanel />
            <MoneyPanel />
          </div>
        </TabbedShowLayout.Tab>
        <TabbedShowLayout.Tab label="Webhooks" path="webhooks">
          <div>
            <WebhookPanel />
          </div>
        </TabbedShowLayout.Tab>
        <TabbedShowLayout.Tab label="Portal users" path="portal-users">
          <div>
            <PortalUsersPanel />
          </div>
        </TabbedShowLayout.Tab>
        <TabbedShowLayout.Tab label="Drop-in form" path="form">
          <div>
            <FormPanel />
          </div>
        </TabbedShowLayout.Tab>
      </TabbedShowLayout>
    </Show>
  );
}
