/**
 * The page an e-mailed reset link opens: choosing a new password (the invite's rule, checked by the
 * service). Using it signs the person out everywhere; a used or expired link is refused in words.
 */
import { Alert, Button, Stack, TextField, Typography } from "@mui/material";
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router-dom";
import { api, data, explain } from "./api.ts";
import { OpenPage } from "./OpenPage.tsx";
import { forgetReset, resetToken } from "./session.ts";

export function ResetPasswordPage() {
  const navigate = useNavigate();
  const [token] = useState(() => resetToken());
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
      await data(api.POST("/api/v1/portal/password_reset/confirm/", { body: { token: token ?? "", password } }));
      forgetReset();
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
        Choose a new password
      </Typography>
      {token === null && (
        <Alert severity="error" role="alert">
          This page opens from a password reset link. Ask for one with "Forgot password?" on the sign-in page.
        </Alert>
      )}
      {token !== null && !done && (
        <>
          <Typography variant="body2" gutterBottom>
            Use at least 12 characters that are hard to guess and do not contain your email, your name or your
            provider's name: a phrase of four or more unrelated words works well. Choosing it signs you out everywhere.
          </Typography>
          {error && (
            <Alert severity="error" role="alert" sx={{ my: 1 }}>
              {error}
            </Alert>
          )}
          <Stack component="form" spacing={2} onSubmit={submit} sx={{ mt: 1 }}>
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
              Set new password
            </Button>
          </Stack>
        </>
      )}
      {done && (
        <Stack spacing={2}>
          <Alert severity="success" role="status">
            Your new password is set. Sign in with your email and this password.
          </Alert>
          <Button variant="contained" onClick={() => navigate("/login")}>
            Go to sign-in
          </Button>
        </Stack>
      )}
    </OpenPage>
  );
}
