/** The provider portal at /portal/ (the router's basename): react-admin over the portal's own routes. */
import { CustomRoutes, Resource } from "react-admin";
import { Route } from "react-router-dom";
import { ConsoleApp } from "../../ui/src/ConsoleApp.tsx";
import { AccountPage } from "./Account.tsx";
import { authProvider } from "./authProvider.ts";
import { DocsPage } from "./Docs.tsx";
import { dataProvider } from "./dataProvider.ts";
import { EarningsPage } from "./Earnings.tsx";
import { ForgotPasswordPage } from "./ForgotPassword.tsx";
import { FormPage } from "./Form.tsx";
import { Home } from "./Home.tsx";
import { InvitePage } from "./Invite.tsx";
import { Layout } from "./Layout.tsx";
import { LeadList, LeadShow } from "./leads.tsx";
import { ResetPasswordPage } from "./ResetPassword.tsx";
import { ReturnsPage } from "./Returns.tsx";
import { RulesPage } from "./Rules.tsx";
import { RequestList, RequestShow } from "./requests.tsx";
import { SandboxPage } from "./Sandbox.tsx";
import { SignInPage } from "./SignIn.tsx";
import { StatsPage } from "./Stats.tsx";
import { TeamPage } from "./Team.tsx";
import { WebhooksPage } from "./Webhooks.tsx";

export function App() {
  return (
    <ConsoleApp
      basename="/portal"
      title="Lead Provider portal"
      dashboard={Home}
      dataProvider={dataProvider}
      authProvider={authProvider}
      loginPage={SignInPage}
      layout={Layout}
      requireAuth
    >
      <Resource name="leads" list={LeadList} show={LeadShow} recordRepresentation="order_number" />
      <Resource name="requests" list={RequestList} show={RequestShow} recordRepresentation="request_id" />
      <CustomRoutes>
        <Route path="/statistics" element={<StatsPage />} />
        <Route path="/rules" element={<RulesPage />} />
        <Route path="/earnings" element={<EarningsPage />} />
        <Route path="/returns" element={<ReturnsPage />} />
        <Route path="/webhooks" element={<WebhooksPage />} />
        <Route path="/sandbox" element={<SandboxPage />} />
        <Route path="/form" element={<FormPage />} />
        <Route path="/docs" element={<DocsPage />} />
        <Route path="/team" element={<TeamPage />} />
        <Route path="/account" element={<AccountPage />} />
      </CustomRoutes>
      <CustomRoutes noLayout>
        <Route path="/invite" element={<InvitePage />} />
        <Route path="/forgot-password" element={<ForgotPasswordPage />} />
        <Route path="/reset" element={<ResetPasswordPage />} />
      </CustomRoutes>
    </ConsoleApp>
  );
}
