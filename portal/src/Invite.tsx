/** The invite link's page: who it is for, and choosing a password (checked by the service). */
import { Alert, Button, Stack, TextField, Typography } from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router-dom";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import { api, data, explain } from "./api.ts";
import { OpenPage } from "./OpenPage.tsx";
import { forgetInvite, inviteToken } from "./session.ts";

export function InvitePage() {
  const navigate = useNavigate();
  const [token] = useState(() => inviteToken());
  const invite = useQuery({
    queryKey: ["invite", token],
    queryFn: () => data(api.POST("/api/v1/portal/invite/", { body: { token: token ?? "" } })),
    enabled: token !== null,
    retry: false,
  });
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    if (password !== repeat) {
      setError("The two passwords differ.");
      return;
    }
    setBusy(true);
    try {
      await data(api.POST("/api/v1/portal/invite/accept/", { body: { token: token ?? "", password } }));
      forgetInvite();
      setDone(true);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <OpenPage>
      <Typography component="h1" variant="h5" gutterBottom>
        Choose your password
      </Typography>
      <TimeZoneNote />
      {token === null && (
        <Alert severity="error">This page opens from an invite link. Ask your administrator for one.</Alert>
      )}
      {invite.isError && (
        <Alert severity="error" role="alert">
          {explain(invite.error)}
        </Alert>
      )}
      {invite.data && !done && (
        <>
          <Typography variant="body2" gutterBottom>
            {invite.data.name}, you are invited to the portal of <strong>{invite.data.provider_name}</strong> as{" "}
            <strong>{invite.data.email}</strong>. The link works until {when(invite.data.expires_at)}.
          </Typography>
          <Typography variant="body2" gutterBottom>
            Use at least 12 characters that are hard to guess: a phrase of four or more unrelated words works well.
            {invite.data.second_factor_required &&
              " After signing in you will set up an authenticator app (required here)."}
          </Typography>
          {error && (
            <Alert severity="error" role="alert" sx={{ my: 1 }}>
              {error}
            </Alert>
          )}
          <Stack component="form" spacing={2} onSubmit={submit} sx={{ mt: 1 }}>
            <input type="text" hidden readOnly autoComplete="username" value={invite.data.email} />
            <TextField
              label="New password"
              type="password"
              autoComplete="new-password"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
            <TextField
              label="Repeat the password"
              type="password"
              autoComplete="new-password"
              required
              value={repeat}
              onChange={(e) => setRepeat(e.target.value)}
            />
            <Button type="submit" variant="contained" disabled={busy}>
              Set password
            </Button>
          </Stack>
        </>
      )}
      {done && (
        <Stack spacing={2}>
          <Alert severity="success">Your password is set. Sign in with your email and this password.</Alert>
          <Button variant="contained" onClick={() => navigate("/login")}>
            Go to sign-in
          </Button>
        </Stack>
      )}
    </OpenPage>
  );
}
