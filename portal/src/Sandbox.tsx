/**
 * The sandbox: the live key as a mask (administrators issue it), the test key (issued, viewed and
 * rotated here), a curl and a TypeScript SDK snippet that create a test lead with it, and the
 * reserved test values.
 */
import { Alert, Box, Button, Stack, TableCell, TableRow, Typography } from "@mui/material";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Title } from "react-admin";
import { ConfirmDialog } from "../../ui/src/components/ConfirmDialog.tsx";
import { CopyButton } from "../../ui/src/components/CopyButton.tsx";
import { DataTable } from "../../ui/src/components/DataTable.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import { api, data, explain, type Schemas } from "./api.ts";
import { curlFor, sdkSnippetFor } from "./sandbox-examples.ts";

type Key = Schemas["ApiKeySummary"] | null;

function KeyLine({ name, k }: { name: string; k: Key }) {
  return (
    <Typography variant="body2">
      {name}:{" "}
      {k ? (
        <>
          <code>{k.masked}</code>, created {when(k.created_at)}, last used {when(k.last_used_at)}
        </>
      ) : (
        "none issued"
      )}
    </Typography>
  );
}

export function SandboxPage() {
  const client = useQueryClient();
  const keys = useQuery({ queryKey: ["keys"], queryFn: () => data(api.GET("/api/v1/portal/keys/")) });
  const [testKey, setTestKey] = useState<string | null>(null);
  const [asking, setAsking] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  async function show() {
    try {
      const k = await data(api.GET("/api/v1/portal/keys/test/"));
      setTestKey(k.api_key);
      if (k.api_key === null) setMessage({ ok: false, text: "No test key yet: issue one." });
    } catch (err) {
      setMessage({ ok: false, text: explain(err) });
    }
  }
  async function issue() {
    setAsking(false);
    try {
      const k = await data(api.POST("/api/v1/portal/keys/test/"));
      setTestKey(k.api_key);
      setMessage({
        ok: true,
        text: k.previous_key_expires_at
          ? `A new test key is issued; the previous one works until ${when(k.previous_key_expires_at)}.`
          : "A test key is issued.",
      });
      await client.invalidateQueries({ queryKey: ["keys"] });
    } catch (err) {
      setMessage({ ok: false, text: explain(err) });
    }
  }
  const curl = testKey ? curlFor(testKey, window.location.origin) : null;
  const sdk = testKey ? sdkSnippetFor(testKey, window.location.origin) : null;

  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Sandbox" />
      <Typography component="h1" variant="h5" gutterBottom>
        Sandbox
      </Typography>
      <Typography variant="body2" gutterBottom>
        A test key (<code>lp_test_…</code>) creates test leads: they follow the same rules and send the same signed
        webhooks (with <code>"livemode": false</code>), but never reach the sales team, the live counts or billing.
      </Typography>
      <TimeZoneNote />
      {message && (
        <Alert severity={message.ok ? "success" : "error"} sx={{ my: 1 }}>
          {message.text}
        </Alert>
      )}
      {keys.data && (
        <Stack spacing={1} sx={{ my: 2 }}>
          <KeyLine name="Live key" k={keys.data.live} />
          <Typography variant="body2">Live keys are issued and shown by your administrator.</Typography>
          <KeyLine name="Test key" k={keys.data.test} />
          {/* Showing the key is what a person comes for; rotating it is rarer and ends the current key, so it asks. */}
          <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: "wrap" }}>
            {keys.data.test ? (
              <>
                <Button variant="contained" onClick={show}>
                  Show test key
                </Button>
                <Button variant="outlined" color="error" onClick={() => setAsking(true)}>
                  Rotate test key
                </Button>
              </>
            ) : (
              <Button variant="contained" onClick={issue}>
                Issue test key
              </Button>
            )}
          </Stack>
        </Stack>
      )}
      {testKey && (
        <Box sx={{ my: 2 }}>
          <Typography variant="body2" sx={{ overflowWrap: "anywhere" }}>
            Test key: <code data-testid="test-key">{testKey}</code>
          </Typography>
          <Typography component="h2" variant="h6" sx={{ mt: 2 }}>
            Create a test lead
          </Typography>
          <Box
            component="pre"
            data-testid="sandbox-curl"
            sx={{ whiteSpace: "pre-wrap", wordBreak: "break-all", bgcolor: "#f4f6f8", p: 1, borderRadius: 1 }}
          >
            {curl}
          </Box>
          <CopyButton text={curl ?? ""} label="Copy the command" />
          <Typography variant="body2" sx={{ mt: 2 }}>
            Or with the TypeScript SDK (<code>npm install @lead-provider/sdk</code>; a PHP SDK is in the API's
            repository, <code>sdks/php</code>):
          </Typography>
          <Box
            component="pre"
            data-testid="sandbox-sdk"
            sx={{ whiteSpace: "pre-wrap", wordBreak: "break-all", bgcolor: "#f4f6f8", p: 1, borderRadius: 1 }}
          >
            {sdk}
          </Box>
          <CopyButton text={sdk ?? ""} label="Copy the SDK snippet" />
        </Box>
      )}
      <ConfirmDialog
        open={asking}
        title="Rotate the test key?"
        confirm="Rotate test key"
        danger
        onConfirm={issue}
        onClose={() => setAsking(false)}
      >
        A new test key is issued at once. The current test key keeps working for one more hour, then stops: requests
        with it are refused from then on, so switch your integration to the new key within the hour. This cannot be
        undone. Live keys are not affected.
      </ConfirmDialog>
      <Typography component="h2" variant="h6" sx={{ mt: 2 }}>
        Reserved test values
      </Typography>
      <Typography variant="body2" gutterBottom>
        Put one in <code>note_from_shipper</code> of a test lead to see each outcome.
      </Typography>
      <DataTable label="Reserved test values" region columns={["note_from_shipper", "What happens"]}>
        {keys.data?.sandbox_values.map((v) => (
          <TableRow key={v.value}>
            <TableCell>
              <code>{v.value}</code>
            </TableCell>
            <TableCell>{v.effect}</TableCell>
          </TableRow>
        ))}
      </DataTable>
    </Box>
  );
}
