/** Sign-in: email and password, then the authenticator code when the account has a second factor. */
import { Alert, Button, Link, Stack, TextField, Typography } from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useLogin } from "react-admin";
import { Link as RouterLink } from "react-router-dom";
import { api, data, explain } from "./api.ts";
import { SecondFactorNeeded } from "./authProvider.ts";
import { OpenPage } from "./OpenPage.tsx";
import { takeSignOutReason } from "./session.ts";

export function SignInPage() {
  const login = useLogin();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [needsCode, setNeedsCode] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice] = useState(() => takeSignOutReason());
  const [busy, setBusy] = useState(false);
  // "Forgot password?" only where the service sends e-mail (SMTP_URL).
  const reset = useQuery({
    queryKey: ["password-reset"],
    queryFn: () => data(api.GET("/api/v1/portal/password_reset/")),
    retry: false,
  });
  const canReset = reset.data?.available === true;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login({ email, password, ...(needsCode && { totp_code: code }) });
    } catch (err) {
      if (err instanceof SecondFactorNeeded) setNeedsCode(true);
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <OpenPage>
      <Typography component="h1" variant="h5" gutterBottom>
        Lead Provider portal
      </Typography>
      <Typography variant="body2" gutterBottom>
        Sign in with the email your administrator invited and the password you chose.
      </Typography>
      {notice && !error && (
        <Alert severity="info" sx={{ my: 1 }}>
          {notice}
        </Alert>
      )}
      {error && (
        <Alert severity={needsCode && !code ? "info" : "error"} sx={{ my: 1 }} role="alert">
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
        <TextField
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {needsCode && (
          <TextField
            label="Authenticator code"
            autoComplete="one-time-code"
            inputMode="numeric"
            required
            autoFocus
            value={code}
            onChange={(e) => setCode(e.target.value.trim())}
          />
        )}
        <Button type="submit" variant="contained" disabled={busy}>
          Sign in
        </Button>
      </Stack>
      {canReset && (
        <Typography variant="body2" sx={{ mt: 2 }}>
          <Link component={RouterLink} to="/forgot-password">
            Forgot password?
          </Link>
        </Typography>
      )}
      <Typography variant="body2" sx={{ mt: 2 }}>
        {canReset
          ? "Lost your authenticator? Ask your administrator for a fresh invite link."
          : "Forgot your password or lost your authenticator? Ask your administrator for a fresh invite link."}
      </Typography>
    </OpenPage>
  );
}
