/** English messages of both apps: react-admin's own plus the names of their resources and fields. */
import polyglotI18nProvider from "ra-i18n-polyglot";
import englishMessages from "ra-language-english";

const messages = {
  ...englishMessages,
  ra: {
    ...englishMessages.ra,
    // An empty list says what to do, and blames a filter only when one is set.
    navigation: {
      ...englishMessages.ra.navigation,
      no_filtered_results: "No %{name} match the filters above. Change or clear a filter to see more.",
      no_results: "No %{name} yet.",
    },
    page: { ...englishMessages.ra.page, empty: "No %{name} yet.", invite: "They appear here as they arrive." },
  },
  resources: {
    providers: {
      name: "Provider |||| Providers",
      fields: {
        name: "Name",
        contact_email: "Contact email",
        created_at: "Created",
        updated_at: "Updated",
        is_active: "Active",
        webhook_url: "Webhook URL",
        notes: "Notes",
        q: "Search",
      },
    },
    leads: {
      name: "Lead |||| Leads",
      fields: {
        order_number: "Order number",
        external_id: "External id",
        provider_id: "Provider",
        created_at: "Created",
        lead_status: "Lead status",
        billable: "Billable",
        sub_id: "Sub-source",
        source_url: "Source page",
        company_name: "Company",
        estimated_ship_date: "Ship date",
        note_from_shipper: "Note from the shipper",
        vehicles: "Vehicles",
        history: "History",
        year: "Year",
        make: "Make",
        model: "Model",
        type: "Type",
        include_test: "Include test leads",
        q: "Search",
      },
    },
    audit: { name: "Audit entry |||| Audit log" },
  },
};

export const i18nProvider = polyglotI18nProvider(() => messages, "en", [{ locale: "en", name: "English" }], {
  allowMissing: true,
});
