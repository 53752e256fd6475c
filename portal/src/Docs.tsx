/** Integration docs: where the reference, the contract and the intake rules are. */
import { Box, Link, List, ListItem, Typography } from "@mui/material";
import { Title } from "react-admin";
import { Link as RouterLink } from "react-router-dom";

export function DocsPage() {
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Integration docs" />
      <Typography component="h1" variant="h5" gutterBottom>
        Integration docs
      </Typography>
      <List>
        <ListItem>
          <Typography>
            <Link href="/docs">API reference</Link>: every operation with examples, and Try it against this service.
          </Typography>
        </ListItem>
        <ListItem>
          <Typography>
            <Link href="/openapi.yaml">openapi.yaml</Link>: the contract, to generate a client.
          </Typography>
        </ListItem>
        <ListItem>
          <Typography>
            <Link component={RouterLink} to="/sandbox">
              Sandbox
            </Link>
            : a test key, a curl that creates a test lead, and the reserved test values.
          </Typography>
        </ListItem>
        <ListItem>
          <Typography>
            Your intake rules, caps and hours: <code>GET /api/v1/public/intake_rules/</code> with your key, or the{" "}
            <Link component={RouterLink} to="/rules">
              Intake rules
            </Link>{" "}
            page, in words.
          </Typography>
        </ListItem>
      </List>
    </Box>
  );
}
