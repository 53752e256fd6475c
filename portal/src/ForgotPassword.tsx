/**
 * "Forgot password?": the person gives their email and the service e-mails a link to choose a new
 * one. The answer is the same whether or not the email has an account, so the page says only that.
 */
import { Alert, Button, Stack, TextField, Typography } from "@mui/material";
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router-dom";
import { api, data, explain } from "./api.ts";
import { OpenPage } from "./OpenPage.tsx";

export function ForgotPasswordPage() {
  const navigate = useNavigate();
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setSent((await data(api.POST("/api/v1/portal/password_reset/", { body: { email } }))).message);
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <OpenPage>
      <Typography component="h1" variant="h5" gutterBottom>
        Forgot your password?
      </Typography>
      {sent ? (
        <Stack spacing={2}>
          <Alert severity="success" role="status">
            {sent}
          </Alert>
          <Button variant="contained" onClick={() => navigate("/login")}>
            Back to sign-in
          </Button>
        </Stack>
      ) : (
        <>
          <Typography variant="body2" gutterBottom>
            Enter the email you sign in with. We will e-mail you a link to choose a new password.
          </Typography>
          {error && (
            <Alert severity="error" role="alert" sx={{ my: 1 }}>
              {error}
            </Alert>
          )}
          <Stack component="form" spacing={2} onSubmit={submit} sx={{ mt: 1 }}>
            <TextField
              label="Email"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
            <Button type="submit" variant="contained" disabled={busy}>
              Send me a link
            </Button>
            <Button onClick={() => navigate("/login")}>Back to sign-in</Button>
          </Stack>
        </>
      )}
    </OpenPage>
  );
}
