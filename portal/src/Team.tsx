/**
 * The provider's own people, for its portal administrators: who they are, inviting one (the link
 * is e-mailed when the service sends mail, and shown once to copy), a fresh invite link, making
 * a person an administrator or a member (oneself included, unless the last active administrator),
 * and disabling, each behind a confirmation. Members never see this page in the menu; the service
 * refuses them anyway.
 */
import {
  Alert,
  Box,
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
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Title } from "react-admin";
import { ConfirmDialog } from "../../ui/src/components/ConfirmDialog.tsx";
import { CopyButton } from "../../ui/src/components/CopyButton.tsx";
import { DataTable } from "../../ui/src/components/DataTable.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import { api, data, explain, type Schemas } from "./api.ts";
import { me } from "./authProvider.ts";

type User = Schemas["PortalUser"];
type Invite = Schemas["PortalInviteIssued"];

export const ROLE_WORDS: Record<User["role"], string> = { admin: "Administrator", member: "Member" };
const STATUS_WORDS: Record<User["status"], string> = { invited: "Invited", active: "Active", disabled: "Disabled" };

function InviteLink({ invite }: { invite: Invite }) {
  return (
    <Alert severity="success" sx={{ my: 1, overflowWrap: "anywhere" }} role="status">
      {invite.emailed
        ? `An invite was e-mailed to ${invite.user.email}. `
        : `Hand this invite link to ${invite.user.email} yourself. `}
      It works once, until {when(invite.invite_expires_at)}:
      <br />
      <code data-testid="invite-url">{invite.invite_url}</code>
      <br />
      <CopyButton text={invite.invite_url} label="Copy link" />
    </Alert>
  );
}

export function TeamPage() {
  const client = useQueryClient();
  const self = useQuery({ queryKey: ["me"], queryFn: me });
  const isAdmin = self.data?.user.role === "admin";
  const team = useQuery({
    queryKey: ["team"],
    queryFn: () => data(api.GET("/api/v1/portal/users/")),
    enabled: isAdmin,
  });
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<User["role"]>("member");
  const [invite, setInvite] = useState<Invite | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [confirming, setConfirming] = useState<{ user: User; action: "disable" | "reinvite" | "role" } | null>(null);
  const [busy, setBusy] = useState(false);

  const refresh = () => client.invalidateQueries({ queryKey: ["team"] });

  async function submit(e: FormEvent) {
    e.preventDefault();
    setMessage(null);
    setBusy(true);
    try {
      setInvite(await data(api.POST("/api/v1/portal/users/", { body: { email, name, role } })));
      setEmail("");
      setName("");
      setRole("member");
      await refresh();
    } catch (err) {
      setInvite(null);
      setMessage({ ok: false, text: explain(err) });
    } finally {
      setBusy(false);
    }
  }

  async function act() {
    if (!confirming) return;
    const { user, action } = confirming;
    setBusy(true);
    setMessage(null);
    try {
      const path = { params: { path: { user_id: user.id } } };
      if (action === "role") {
        const to = user.role === "admin" ? "member" : "admin";
        await data(api.POST("/api/v1/portal/users/{user_id}/role/", { ...path, body: { role: to } }));
        setInvite(null);
        if (user.id === self.data?.user.id) {
          // Stepping down: this page is no longer theirs.
          await client.invalidateQueries({ queryKey: ["me"] });
          setMessage({ ok: true, text: "You are now a member." });
        } else {
          setMessage({ ok: true, text: `${user.name} is now ${to === "admin" ? "an administrator" : "a member"}.` });
        }
      } else if (action === "disable") {
        await data(api.POST("/api/v1/portal/users/{user_id}/disable/", path));
        setInvite(null);
        setMessage({ ok: true, text: `${user.name} is disabled: they can no longer sign in.` });
      } else {
        setInvite(await data(api.POST("/api/v1/portal/users/{user_id}/invite/", path)));
      }
      await refresh();
    } catch (err) {
      setMessage({ ok: false, text: explain(err) });
    } finally {
      setBusy(false);
      setConfirming(null);
    }
  }

  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Team" />
      <Typography component="h1" variant="h5" gutterBottom>
        Team
      </Typography>
      <TimeZoneNote />
      {self.data && !isAdmin && (
        <Alert severity="info">Only your provider's portal administrators can manage its team.</Alert>
      )}
      {isAdmin && (
        <Stack spacing={2}>
          <Typography variant="body2">
            The people of {self.data?.provider.name} who sign in here. Administrators can also invite, disable and
            re-invite people and change their roles.
          </Typography>
          {message && (
            <Alert severity={message.ok ? "success" : "error"} role={message.ok ? "status" : "alert"}>
              {message.text}
            </Alert>
          )}
          {invite && <InviteLink invite={invite} />}
          <Box component="section" aria-labelledby="invite-heading">
            <Typography component="h2" variant="h6" id="invite-heading" gutterBottom>
              Invite a person
            </Typography>
            <Stack component="form" direction={{ xs: "column", sm: "row" }} spacing={1} onSubmit={submit}>
              <TextField
                size="small"
                label="Email"
                type="email"
                required
                value={email}
                onChange={(e) => setEmail(e.target.value)}
              />
              <TextField size="small" label="Name" required value={name} onChange={(e) => setName(e.target.value)} />
              <FormControl size="small" sx={{ minWidth: 160 }}>
                <InputLabel id="invite-role-label">Role</InputLabel>
                <Select
                  labelId="invite-role-label"
                  label="Role"
                  value={role}
                  onChange={(e) => setRole(e.target.value as User["role"])}
                >
                  <MenuItem value="member">{ROLE_WORDS.member}</MenuItem>
                  <MenuItem value="admin">{ROLE_WORDS.admin}</MenuItem>
                </Select>
              </FormControl>
              <Button type="submit" variant="contained" disabled={busy}>
                Invite
              </Button>
            </Stack>
          </Box>
          {team.isError && (
            <Alert severity="error" role="alert">
              {explain(team.error)}
            </Alert>
          )}
          {team.data && (
            <DataTable label="Team" region columns={["Person", "Role", "Status", "Last sign-in", "Actions"]}>
              {team.data.results.map((u) => (
                <TableRow key={u.id}>
                  <TableCell>
                    {u.name} ({u.email})
                  </TableCell>
                  <TableCell>{ROLE_WORDS[u.role]}</TableCell>
                  <TableCell>
                    <Chip size="small" label={STATUS_WORDS[u.status]} />
                  </TableCell>
                  <TableCell>{when(u.last_sign_in_at)}</TableCell>
                  <TableCell>
                    {u.id === self.data?.user.id ? (
                      <Stack direction="row" spacing={1} alignItems="center">
                        <Typography variant="body2">You</Typography>
                        <Button size="small" onClick={() => setConfirming({ user: u, action: "role" })}>
                          Become a member
                        </Button>
                      </Stack>
                    ) : (
                      <Stack direction="row" spacing={1}>
                        <Button
                          size="small"
                          onClick={() => setConfirming({ user: u, action: "role" })}
                          aria-label={`${u.role === "admin" ? "Make member" : "Make administrator"}: ${u.name}`}
                        >
                          {u.role === "admin" ? "Make member" : "Make administrator"}
                        </Button>
                        <Button
                          size="small"
                          onClick={() => setConfirming({ user: u, action: "reinvite" })}
                          aria-label={`New invite link for ${u.name}`}
                        >
                          New invite link
                        </Button>
                        {u.status !== "disabled" && (
                          <Button
                            size="small"
                            color="error"
                            onClick={() => setConfirming({ user: u, action: "disable" })}
                            aria-label={`Disable ${u.name}`}
                          >
                            Disable
                          </Button>
                        )}
                      </Stack>
                    )}
                  </TableCell>
                </TableRow>
              ))}
            </DataTable>
          )}
        </Stack>
      )}
      <ConfirmDialog
        open={confirming?.action === "disable"}
        title="Disable this person?"
        confirm="Disable"
        danger
        busy={busy}
        onConfirm={act}
        onClose={() => setConfirming(null)}
      >
        {confirming?.user.name} ({confirming?.user.email}) can no longer sign in, and any session they have open ends
        now. A new invite link brings them back.
      </ConfirmDialog>
      <ConfirmDialog
        open={confirming?.action === "role"}
        title={
          confirming?.user.id === self.data?.user.id
            ? "Become a member?"
            : confirming?.user.role === "admin"
              ? "Make this person a member?"
              : "Make this person an administrator?"
        }
        confirm={confirming?.user.role === "admin" ? "Make member" : "Make administrator"}
        busy={busy}
        onConfirm={act}
        onClose={() => setConfirming(null)}
      >
        {confirming?.user.id === self.data?.user.id
          ? "You will no longer manage your provider's team; another administrator can make you one again."
          : confirming?.user.role === "admin"
            ? `${confirming?.user.name} (${confirming?.user.email}) will no longer manage your provider's team.`
            : `${confirming?.user.name} (${confirming?.user.email}) will also be able to invite, disable and re-invite people and change their roles.`}
      </ConfirmDialog>
      <ConfirmDialog
        open={confirming?.action === "reinvite"}
        title="Send a new invite link?"
        confirm="Send new link"
        busy={busy}
        onConfirm={act}
        onClose={() => setConfirming(null)}
      >
        {confirming?.user.name} ({confirming?.user.email}) gets a new invite link to choose a password; their previous
        link stops working, any session they have open ends, and a second factor they set up is removed.
      </ConfirmDialog>
    </Box>
  );
}
