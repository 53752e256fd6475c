/**
 * A provider's drop-in form: its publishable keys (issued or rotated here, audited), allowed
 * origins, consent text and switch, and the snippet, with the editor the portal's Form page uses.
 */
import { Typography } from "@mui/material";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useRecordContext } from "react-admin";
import { FormSettingsEditor, PublishableKeys, Snippet } from "../../../ui/src/components/formSettings.tsx";
import { api, data, type Schemas } from "../api.ts";
import { Panel } from "./Panel.tsx";

export function FormPanel() {
  const record = useRecordContext<Schemas["Provider"]>();
  const client = useQueryClient();
  const id = record?.id;
  const settings = useQuery({
    queryKey: ["form_settings", id],
    enabled: id !== undefined,
    queryFn: () => data(api.GET("/api/v1/lead_providers/{id}/form_settings/", { params: { path: { id: id! } } })),
  });
  if (id === undefined) return null;
  const s = settings.data;
  return (
    <Panel title="Drop-in form">
      {settings.error && <Typography color="error">{settings.error.message}</Typography>}
      {s && (
        <>
          <PublishableKeys
            settings={s}
            rotate={async (mode) => {
              await data(
                api.POST("/api/v1/lead_providers/{id}/publishable_key/", { params: { path: { id } }, body: { mode } }),
              );
              await client.invalidateQueries({ queryKey: ["form_settings", id] });
            }}
          />
          <FormSettingsEditor
            settings={s}
            save={async (body) => {
              const saved = await data(
                api.PUT("/api/v1/lead_providers/{id}/form_settings/", { params: { path: { id } }, body }),
              );
              client.setQueryData(["form_settings", id], saved);
            }}
          />
          <Typography component="h3" variant="subtitle1" sx={{ fontWeight: 600 }}>
            Snippets
          </Typography>
          <Snippet snippet={s.snippets.live} mode="live" />
          <Snippet snippet={s.snippets.test} mode="test" />
        </>
      )}
    </Panel>
  );
}
