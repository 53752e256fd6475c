/**
 * The drop-in quote form, run by the provider's own people: publishable keys (rotated after a
 * confirmation), allowed origins, consent text, on or off; the snippet to paste, exactly as the
 * service gives it; a preview of the form (the element itself in `preview` mode: no request
 * leaves it, so the portal's own origin need not be allowed); this week's form leads and
 * refusals by reason.
 */
import { Box, ToggleButton, ToggleButtonGroup, Typography } from "@mui/material";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Title } from "react-admin";
import {
  type FormMode,
  FormSettingsEditor,
  FormWeek,
  PublishableKeys,
  Snippet,
} from "../../ui/src/components/formSettings.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { api, data } from "./api.ts";

declare module "react" {
  namespace JSX {
    interface IntrinsicElements {
      "lead-quote-form": React.DetailedHTMLProps<React.HTMLAttributes<HTMLElement>, HTMLElement> & {
        preview?: string;
        "consent-text"?: string;
      };
    }
  }
}

/** Loads the form's script (this service's own, allowed by the portal's CSP) once. */
function useFormScript(src: string | undefined): void {
  useEffect(() => {
    if (!src || customElements.get("lead-quote-form")) return;
    const path = new URL(src, window.location.origin).pathname;
    if (document.querySelector(`script[data-form-script]`)) return;
    const s = document.createElement("script");
    s.src = path;
    s.defer = true;
    s.dataset.formScript = "";
    document.head.append(s);
  }, [src]);
}

export function FormPage() {
  const client = useQueryClient();
  const [mode, setMode] = useState<FormMode>("test");
  const settings = useQuery({
    queryKey: ["form_settings"],
    queryFn: () => data(api.GET("/api/v1/portal/form_settings/")),
  });
  const stats = useQuery({
    queryKey: ["form_stats", mode],
    queryFn: () => data(api.GET("/api/v1/portal/form_stats/", { params: { query: { mode } } })),
  });
  useFormScript(settings.data?.script_url);
  const s = settings.data;

  return (
    <Box sx={{ p: { xs: 1, sm: 2 }, maxWidth: 960 }}>
      <Title title="Form" />
      <Typography component="h1" variant="h5" gutterBottom>
        Drop-in form
      </Typography>
      <TimeZoneNote />
      <Typography variant="body2" gutterBottom>
        Paste the snippet into a page of your site: the page shows a quote form whose leads come straight to us, each
        with the consent the person gave. It works only on the origins you allow below.
      </Typography>
      {s && (
        <>
          <PublishableKeys
            settings={s}
            rotate={async (m) => {
              await data(api.POST("/api/v1/portal/form_settings/publishable_key/", { body: { mode: m } }));
              await client.invalidateQueries({ queryKey: ["form_settings"] });
            }}
          />
          <FormSettingsEditor
            settings={s}
            save={async (body) => {
              const saved = await data(api.PUT("/api/v1/portal/form_settings/", { body }));
              client.setQueryData(["form_settings"], saved);
            }}
          />
          <Box component="section" aria-labelledby="form-snippet-title" sx={{ my: 2 }}>
            <Typography component="h2" variant="h6" id="form-snippet-title">
              Snippet
            </Typography>
            <ToggleButtonGroup
              exclusive
              size="small"
              value={mode}
              onChange={(_, m: FormMode | null) => m && setMode(m)}
              aria-label="Key for the snippet and the counts"
              sx={{ my: 1 }}
            >
              <ToggleButton value="test">Test</ToggleButton>
              <ToggleButton value="live">Live</ToggleButton>
            </ToggleButtonGroup>
            <Typography variant="body2">Paste both lines where the form should appear, exactly as they are:</Typography>
            <Snippet snippet={s.snippets[mode]} mode={mode} />
          </Box>
          <FormWeek stats={stats.data} mode={mode} />
          <Box component="section" aria-labelledby="form-preview-title" sx={{ my: 2 }}>
            <Typography component="h2" variant="h6" id="form-preview-title">
              Preview
            </Typography>
            <Typography variant="body2" gutterBottom>
              The form as your visitors see it, with your consent text. The preview sends nothing.
            </Typography>
            <Box sx={{ border: 1, borderColor: "divider", borderRadius: 1, p: { xs: 1, sm: 2 }, bgcolor: "#fff" }}>
              <lead-quote-form key={s.consent_text} preview="" consent-text={s.consent_text} />
            </Box>
          </Box>
        </>
      )}
    </Box>
  );
}
