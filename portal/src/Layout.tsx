/** The portal's frame: the provider's name in the app bar on every page, the menu, the user's menu. */
import BarChartIcon from "@mui/icons-material/BarChart";
import DashboardIcon from "@mui/icons-material/Dashboard";
import DescriptionIcon from "@mui/icons-material/Description";
import DynamicFormIcon from "@mui/icons-material/DynamicForm";
import GroupsIcon from "@mui/icons-material/Groups";
import LocalShippingIcon from "@mui/icons-material/LocalShipping";
import ManageAccountsIcon from "@mui/icons-material/ManageAccounts";
import PaymentsIcon from "@mui/icons-material/Payments";
import ReceiptLongIcon from "@mui/icons-material/ReceiptLong";
import RuleIcon from "@mui/icons-material/Rule";
import ScienceIcon from "@mui/icons-material/Science";
import UndoIcon from "@mui/icons-material/Undo";
import WebhookIcon from "@mui/icons-material/Webhook";
import { Typography } from "@mui/material";
import type { ReactNode } from "react";
import { Menu, Layout as RaLayout, TitlePortal, useGetIdentity } from "react-admin";
import { NamedAppBar } from "../../ui/src/components/AppBar.tsx";

/** The provider whose portal this is, on every page. */
function ProviderName() {
  const { identity } = useGetIdentity();
  if (!identity?.provider) return null;
  return (
    <Typography component="p" data-testid="provider-name" sx={{ mx: 1, fontWeight: 600, whiteSpace: "nowrap" }}>
      {String(identity.provider)}
    </Typography>
  );
}

const PortalAppBar = () => (
  <NamedAppBar>
    <ProviderName />
    <TitlePortal />
  </NamedAppBar>
);

function PortalMenu() {
  // Team is for the provider's portal administrators only (the service refuses members anyway).
  const { identity } = useGetIdentity();
  return (
    <Menu>
      <Menu.Item to="/" primaryText="Home" leftIcon={<DashboardIcon />} />
      <Menu.Item to="/leads" primaryText="Leads" leftIcon={<LocalShippingIcon />} />
      <Menu.Item to="/requests" primaryText="Requests" leftIcon={<ReceiptLongIcon />} />
      <Menu.Item to="/statistics" primaryText="Statistics" leftIcon={<BarChartIcon />} />
      <Menu.Item to="/rules" primaryText="Intake rules" leftIcon={<RuleIcon />} />
      <Menu.Item to="/earnings" primaryText="Earnings" leftIcon={<PaymentsIcon />} />
      <Menu.Item to="/returns" primaryText="Returns" leftIcon={<UndoIcon />} />
      <Menu.Item to="/webhooks" primaryText="Webhooks" leftIcon={<WebhookIcon />} />
      <Menu.Item to="/sandbox" primaryText="Sandbox" leftIcon={<ScienceIcon />} />
      <Menu.Item to="/form" primaryText="Form" leftIcon={<DynamicFormIcon />} />
      <Menu.Item to="/docs" primaryText="Integration docs" leftIcon={<DescriptionIcon />} />
      {identity?.role === "admin" && <Menu.Item to="/team" primaryText="Team" leftIcon={<GroupsIcon />} />}
      <Menu.Item to="/account" primaryText="Account" leftIcon={<ManageAccountsIcon />} />
    </Menu>
  );
}

export function Layout({ children }: { children: ReactNode }) {
  return (
    <RaLayout appBar={PortalAppBar} menu={PortalMenu}>
      {children}
    </RaLayout>
  );
}
