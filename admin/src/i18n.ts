/** English messages: react-admin's own plus the resource and field names of this console. */
import polyglotI18nProvider from "ra-i18n-polyglot";
import englishMessages from "ra-language-english";

const messages = {
  ...englishMessages,
  resources: {
    providers: {
      name: "Provider |||| Providers",
      fields: { contact_email: "Contact email", created_at: "Created", updated_at: "Updated" },
    },
    leads: {
      name: "Lead |||| Leads",
      fields: {
        order_number: "Order number",
        external_id: "External id",
        provider_id: "Provider",
        created_at: "Created",
      },
    },
    audit: { name: "Audit entry |||| Audit log" },
  },
};

export const i18nProvider = polyglotI18nProvider(() => messages, "en", [{ locale: "en", name: "English" }], {
  allowMissing: true,
});
