/** The signed-in person: who, which provider, their password, and the TOTP second factor (required when the portal says so). */
import { Alert, Box, Button, Stack, TextField, Typography } from "@mui/material";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Title, useLogout } from "react-admin";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import { api, data, explain } from "./api.ts";

/** Changing one's password: the current one, then the new one twice (the invite's rule, checked by the service). */
function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setResult(null);
    if (password !== repeat) {
      setResult({ ok: false, text: "The two new passwords differ." });
      return;
    }
    setBusy(true);
    try {
      await data(api.POST("/api/v1/portal/me/password/", { body: { current_password: current, password } }));
      setCurrent("");
      setPassword("");
      setRepeat("");
      setResult({ ok: true, text: "Your password is changed; your other sessions have ended." });
    } catch (err) {
      setResult({ ok: false, text: explain(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <Stack component="form" spacing={1} onSubmit={submit} sx={{ maxWidth: 420 }}>
      {result && (
        <Alert severity={result.ok ? "success" : "error"} role={result.ok ? "status" : "alert"}>
          {result.text}
        </Alert>
      )}
      <TextField
        size="small"
        label="Current password"
        type="password"
        autoComplete="current-password"
        required
        value={current}
        onChange={(e) => setCurrent(e.target.value)}
      />
      <TextField
        size="small"
        label="New password"
        type="password"
        autoComplete="new-password"
        required
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      <TextField
        size="small"
        label="Repeat the new password"
        type="password"
        autoComplete="new-password"
        required
        value={repeat}
        onChange={(e) => setRepeat(e.target.value)}
      />
      <Button type="submit" variant="outlined" disabled={busy} sx={{ alignSelf: "flex-start" }}>
        Change password
      </Button>
    </Stack>
  );
}

export function AccountPage() {
  const client = useQueryClient();
  const logout = useLogout();
  const me = useQuery({ queryKey: ["me"], queryFn: () => data(api.GET("/api/v1/portal/me/")) });
  const [setup, setSetup] = useState<{ secret: string; otpauth_uri: string } | null>(null);
  const [code, setCode] = useState("");
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  async function start() {
    try {
      setSetup(await data(api.POST("/api/v1/portal/me/second_factor/")));
      setMessage(null);
    } catch (err) {
      setMessage({ ok: false, text: explain(err) });
    }
  }
  async function confirm(e: FormEvent) {
    e.preventDefault();
    try {
      await data(api.POST("/api/v1/portal/me/second_factor/confirm/", { body: { totp_code: code } }));
      setSetup(null);
      setMessage({ ok: true, text: "The second factor is on: sign-in now asks for a code." });
      await client.invalidateQueries({ queryKey: ["me"] });
      // With PORTAL_REQUIRE_2FA the rest of the portal opens now: load it afresh.
      window.location.assign("/portal/");
    } catch (err) {
      setMessage({ ok: false, text: explain(err) });
    }
  }

  const m = me.data;
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Account" />
      <Typography component="h1" variant="h5" gutterBottom>
        Account
      </Typography>
      <TimeZoneNote />
      {m && (
        <Stack spacing={1}>
          <Typography>
            {m.user.name} ({m.user.email}), {m.provider.name}. Last sign-in {when(m.user.last_sign_in_at)}.
          </Typography>
          {m.second_factor_required && !m.user.second_factor && (
            <Alert severity="warning">This portal requires a second factor: set one up to continue.</Alert>
          )}
          {message && <Alert severity={message.ok ? "success" : "error"}>{message.text}</Alert>}
          <Typography component="h2" variant="h6">
            Password
          </Typography>
          <ChangePassword />
          <Typography component="h2" variant="h6">
            Second factor
          </Typography>
          {m.user.second_factor ? (
            <Typography>On: sign-in asks for the code of your authenticator app.</Typography>
          ) : setup ? (
            <Stack component="form" spacing={1} onSubmit={confirm}>
              <Typography variant="body2">
                Add this key to your authenticator app (or open the link on your phone), then enter the code it shows.
              </Typography>
              <Typography variant="body2">
                Key: <code data-testid="totp-secret">{setup.secret}</code>
              </Typography>
              <Typography variant="body2" sx={{ wordBreak: "break-all" }}>
                <a href={setup.otpauth_uri}>Open in an authenticator app</a>
              </Typography>
              <TextField
                label="Code"
                inputMode="numeric"
                value={code}
                onChange={(e) => setCode(e.target.value.trim())}
              />
              <Button type="submit" variant="contained">
                Turn on
              </Button>
            </Stack>
          ) : (
            <Button variant="outlined" onClick={start} sx={{ alignSelf: "flex-start" }}>
              Set up an authenticator app
            </Button>
          )}
          <Button variant="outlined" color="error" onClick={() => logout()} sx={{ alignSelf: "flex-start", mt: 2 }}>
            Sign out
          </Button>
        </Stack>
      )}
    </Box>
  );
}
