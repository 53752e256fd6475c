/**
 * The provider page's portal users: invite a person (the link is shown once, to copy and hand
 * over, or e-mailed when the service has SMTP_URL), issue a fresh link (also the password reset),
 * make a person an administrator or a member, disable. All through the Management API, which
 * audits each change.
 */
import {
  Alert,
  Button,
  Chip,
  FormControl,
  InputLabel,
  MenuItem,
  Select,
  Stack,
  TableCell,
  TableRow,
  TextField,
  Typography,
} from "@mui/material";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { useNotify, useRecordContext } from "react-admin";
import { ConfirmDialog } from "../../../ui/src/components/ConfirmDialog.tsx";
import { CopyButton } from "../../../ui/src/components/CopyButton.tsx";
import { DataTable } from "../../../ui/src/components/DataTable.tsx";
import { when } from "../../../ui/src/format.ts";
import { api, data, type Schemas } from "../api.ts";
import { Panel, reason } from "./Panel.tsx";

type User = Schemas["PortalUser"];
type Invite = Schemas["PortalInviteIssued"];
const ROLE_WORDS: Record<User["role"], string> = { admin: "Administrator", member: "Member" };

function InviteLink({ invite }: { invite: Invite }) {
  return (
    <Alert severity="success" sx={{ my: 1, overflowWrap: "anywhere" }}>
      Invite link for {invite.user.email} (works once, until {when(invite.invite_expires_at)}
      {invite.emailed ? "; also e-mailed" : "; hand it over yourself"}):
      <br />
      <code data-testid="invite-url">{invite.invite_url}</code>
      <br />
      <CopyButton text={invite.invite_url} label="Copy link" />
    </Alert>
  );
}

export function PortalUsersPanel() {
  const record = useRecordContext<Schemas["Provider"]>();
  const notify = useNotify();
  const id = record?.id;
  const [users, setUsers] = useState<User[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  /** "auto": the service decides (a provider's first person is its administrator). */
  const [role, setRole] = useState<User["role"] | "auto">("auto");
  const [invite, setInvite] = useState<Invite | null>(null);
  const [disabling, setDisabling] = useState<User | null>(null);

  const load = useCallback(async () => {
    if (id === undefined) return;
    try {
      const list = await data(api.GET("/api/v1/lead_providers/{id}/portal_users/", { params: { path: { id } } }));
      setUsers(list.results);
    } catch (err) {
      setError(reason(err));
    }
  }, [id]);
  useEffect(() => void load(), [load]);
  if (id === undefined) return null;
  const pid: number = id;

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      setInvite(
        await data(
          api.POST("/api/v1/lead_providers/{id}/portal_users/", {
            params: { path: { id: pid } },
            body: { email, name, ...(role !== "auto" && { role }) },
          }),
        ),
      );
      setEmail("");
      setName("");
      setRole("auto");
      notify(`Invited ${email}`, { type: "success" });
      await load();
    } catch (err) {
      setError(reason(err));
    }
  }
  async function reissue(u: User) {
    try {
      setInvite(
        await data(
          api.POST("/api/v1/lead_providers/{id}/portal_users/{user_id}/invite/", {
            params: { path: { id: pid, user_id: u.id } },
          }),
        ),
      );
      await load();
    } catch (err) {
      setError(reason(err));
    }
  }
  async function setRoleOf(u: User, to: User["role"]) {
    setError(null);
    try {
      await data(
        api.POST("/api/v1/lead_providers/{id}/portal_users/{user_id}/role/", {
          params: { path: { id: pid, user_id: u.id } },
          body: { role: to },
        }),
      );
      notify(`${u.email} is now ${to === "admin" ? "an administrator" : "a member"}`, { type: "success" });
      await load();
    } catch (err) {
      setError(reason(err));
    }
  }
  async function disable(u: User) {
    setDisabling(null);
    try {
      await data(
        api.POST("/api/v1/lead_providers/{id}/portal_users/{user_id}/disable/", {
          params: { path: { id: pid, user_id: u.id } },
        }),
      );
      notify(`${u.email} is disabled; their sessions ended`, { type: "success" });
      await load();
    } catch (err) {
      setError(reason(err));
    }
  }

  return (
    <Panel title="Portal users">
      <Typography variant="body2" gutterBottom>
        The provider's own people sign in at /portal/ to see their leads, requests and statistics, and to manage their
        webhook and test key. Live keys stay here.
      </Typography>
      {error && <Alert severity="error">{error}</Alert>}
      {invite && <InviteLink invite={invite} />}
      <Stack component="form" direction="row" spacing={1} onSubmit={submit} flexWrap="wrap" useFlexGap sx={{ my: 1 }}>
        <TextField
          size="small"
          label="Email"
          type="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <TextField size="small" label="Name" required value={name} onChange={(e) => setName(e.target.value)} />
        <FormControl size="small" sx={{ minWidth: 200 }}>
          <InputLabel id="portal-role-label">Role</InputLabel>
          <Select
            labelId="portal-role-label"
            label="Role"
            value={role}
            onChange={(e) => setRole(e.target.value as User["role"] | "auto")}
          >
            <MenuItem value="auto">Automatic (the first person is administrator)</MenuItem>
            <MenuItem value="admin">{ROLE_WORDS.admin}</MenuItem>
            <MenuItem value="member">{ROLE_WORDS.member}</MenuItem>
          </Select>
        </FormControl>
        <Button type="submit" variant="contained">
          Invite
        </Button>
      </Stack>
      {users && users.length > 0 && (
        <DataTable
          label="Portal users"
          columns={["Person", "Role", "Status", "Second factor", "Last sign-in", "Actions"]}
        >
          {users.map((u) => (
            <TableRow key={u.id}>
              <TableCell>
                {u.name} ({u.email})
              </TableCell>
              <TableCell>{ROLE_WORDS[u.role]}</TableCell>
              <TableCell>
                <Chip size="small" label={u.status} />
              </TableCell>
              <TableCell>{u.second_factor ? "On" : "Off"}</TableCell>
              <TableCell>{when(u.last_sign_in_at)}</TableCell>
              <TableCell>
                <Stack direction="row" spacing={1}>
                  <Button size="small" onClick={() => reissue(u)}>
                    {u.status === "active" ? "Reset password" : "New invite link"}
                  </Button>
                  <Button
                    size="small"
                    onClick={() => setRoleOf(u, u.role === "admin" ? "member" : "admin")}
                    aria-label={`${u.role === "admin" ? "Make member" : "Make administrator"}: ${u.email}`}
                  >
                    {u.role === "admin" ? "Make member" : "Make administrator"}
                  </Button>
                  {u.status !== "disabled" && (
                    <Button size="small" color="error" onClick={() => setDisabling(u)}>
                      Disable
                    </Button>
                  )}
                </Stack>
              </TableCell>
            </TableRow>
          ))}
        </DataTable>
      )}
      <ConfirmDialog
        open={disabling !== null}
        title="Disable this portal user?"
        confirm="Disable"
        danger
        onConfirm={() => disabling && disable(disabling)}
        onClose={() => setDisabling(null)}
      >
        {disabling?.email} can no longer sign in, and any open session ends now. A new invite link brings them back.
      </ConfirmDialog>
    </Panel>
  );
}
