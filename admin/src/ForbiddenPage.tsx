/** Shown to a signed-in user whose JWT is valid but lacks the admin position: no data, only the way out. */
import { Alert, Box, Button, Card, CardContent, Typography } from "@mui/material";
import { useLogout } from "react-admin";
import { claimsOf, getToken } from "./session.ts";

export function ForbiddenPage() {
  const logout = useLogout();
  const claims = claimsOf(getToken());
  return (
    <Box component="main" sx={{ minHeight: "100vh", display: "grid", placeItems: "center", p: 2 }}>
      <Card sx={{ maxWidth: 560 }}>
        <CardContent>
          <Typography component="h1" variant="h5" gutterBottom>
            Your account lacks the admin position
          </Typography>
          <Alert severity="warning" sx={{ my: 2 }}>
            The service accepted your token{claims.sub ? ` (${String(claims.sub)})` : ""}, but only administrators may
            use the back office. Ask for the admin position in the identity provider, then sign in again.
          </Alert>
          <Button variant="contained" onClick={() => logout()}>
            Sign out
          </Button>
        </CardContent>
      </Card>
    </Box>
  );
}
