/** Sign-in: paste the JWT from the identity provider, or (development only) use the development token. */
import { Alert, Box, Button, Card, CardContent, Stack, TextField, Typography } from "@mui/material";
import { type FormEvent, useEffect, useState } from "react";
import { useLogin, useNotify } from "react-admin";
import { developmentToken } from "./authProvider.ts";
import { takeSignOutReason } from "./session.ts";

export function LoginPage() {
  const login = useLogin();
  const notify = useNotify();
  const [token, setTokenText] = useState("");
  // A session that ended on a refused or expired token says why, here.
  const [error, setError] = useState<string | null>(() => takeSignOutReason());
  const [busy, setBusy] = useState(false);
  // The button is offered only when the service gives development tokens (development only).
  const [devToken, setDevToken] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void developmentToken().then((t) => {
      if (live) setDevToken(t);
    });
    return () => {
      live = false;
    };
  }, []);

  const signIn = async (value: string) => {
    setBusy(true);
    setError(null);
    try {
      await login({ token: value });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      setError(message);
      notify(message, { type: "error" });
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void signIn(token);
  };

  return (
    <Box component="main" sx={{ minHeight: "100vh", display: "grid", placeItems: "center", bgcolor: "grey.100", p: 2 }}>
      <Card sx={{ width: "100%", maxWidth: 520 }}>
        <CardContent>
          <Typography component="h1" variant="h5" gutterBottom>
            Lead Provider back office
          </Typography>
          <Typography variant="body2" color="text.secondary" gutterBottom>
            Sign in with your administrator token (a JWT from the company's identity provider). It is kept in this tab
            only and forgotten when the tab closes.
          </Typography>
          <Box component="form" onSubmit={submit} noValidate>
            <Stack spacing={2} sx={{ mt: 2 }}>
              {error && (
                <Alert severity="error" role="alert">
                  {error}
                </Alert>
              )}
              <TextField
                id="token"
                label="Administrator token (JWT)"
                value={token}
                onChange={(e) => setTokenText(e.target.value)}
                multiline
                minRows={3}
                autoFocus
                required
                slotProps={{ htmlInput: { spellCheck: false, autoComplete: "off" } }}
              />
              <Button type="submit" variant="contained" disabled={busy}>
                Sign in
              </Button>
              {devToken !== null && (
                <>
                  <Button
                    variant="outlined"
                    disabled={busy}
                    onClick={() => void signIn(devToken)}
                    aria-describedby="dev-token-help"
                  >
                    Use the development token
                  </Button>
                  <Typography id="dev-token-help" variant="caption" color="text.secondary">
                    Offered because this service runs in development on its development JWT secret.
                  </Typography>
                </>
              )}
            </Stack>
          </Box>
        </CardContent>
      </Card>
    </Box>
  );
}
