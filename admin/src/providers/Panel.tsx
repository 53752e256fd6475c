/**
 * What the provider detail page's panels share: the panel's frame, a secret shown with its copy
 * button, and the words of a failed call. Revealing a key or a webhook secret reads it from the
 * Management API, which audits the view (the specification's "view again in the back office").
 */
import { Box, Button, Card, CardContent, Stack, Typography } from "@mui/material";
import type { ReactNode } from "react";
import { useNotify } from "react-admin";

export function Panel({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Card component="section" aria-label={title} sx={{ m: 2 }} variant="outlined">
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>
          {title}
        </Typography>
        {children}
      </CardContent>
    </Card>
  );
}

export function Secret({ label, value }: { label: string; value: string }) {
  const notify = useNotify();
  return (
    <Stack direction={{ xs: "column", sm: "row" }} spacing={1} alignItems={{ sm: "center" }} sx={{ my: 1 }}>
      <Box
        component="code"
        aria-label={label}
        sx={{ fontFamily: "monospace", wordBreak: "break-all", bgcolor: "grey.100", p: 1, borderRadius: 1 }}
      >
        {value}
      </Box>
      <Button
        size="small"
        onClick={async () => {
          await navigator.clipboard.writeText(value);
          notify(`${label} copied`, { type: "info" });
        }}
      >
        Copy {label.toLowerCase()}
      </Button>
    </Stack>
  );
}

/** Error text of a failed call, as the service worded it. */
export const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Runs a panel's call; a failure is shown in the service's words. */
export function useAct() {
  const notify = useNotify();
  return async (what: () => Promise<void>) => {
    try {
      await what();
    } catch (err) {
      notify(reason(err), { type: "error" });
    }
  };
}
