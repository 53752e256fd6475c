/**
 * The back office at /admin/ (the router's basename): react-admin over the service's own
 * contracts. Nothing of a screen shows before the session is known (`requireAuth`): signed out,
 * the first screen drawn is sign-in.
 */

import AccountBalanceIcon from "@mui/icons-material/AccountBalance";
import HistoryIcon from "@mui/icons-material/History";
import LocalShippingIcon from "@mui/icons-material/LocalShipping";
import ReceiptLongIcon from "@mui/icons-material/ReceiptLong";
import StorefrontIcon from "@mui/icons-material/Storefront";
import UndoIcon from "@mui/icons-material/Undo";
import { Suspense } from "react";
import { CustomRoutes, Loading, Resource } from "react-admin";
import { Route } from "react-router-dom";
import { ConsoleApp } from "../../ui/src/ConsoleApp.tsx";
import { lazyScreen } from "../../ui/src/lazy.ts";
import { authProvider, FORBIDDEN_PATH } from "./authProvider.ts";
import { dataProvider } from "./dataProvider.ts";
import { ForbiddenPage } from "./ForbiddenPage.tsx";
import { Layout } from "./Layout.tsx";
import { LoginPage } from "./LoginPage.tsx";

// Each screen is its own chunk, fetched on its first visit: sign-in loads only the shell.
const Dashboard = lazyScreen(() => import("./dashboard.tsx"), "Dashboard");
const AuditList = lazyScreen(() => import("./audit.tsx"), "AuditList");
const ConsentRecordPage = lazyScreen(() => import("./consents.tsx"), "ConsentRecordPage");
const LeadList = lazyScreen(() => import("./leads.tsx"), "LeadList");
const LeadShow = lazyScreen(() => import("./leads.tsx"), "LeadShow");
const PayablesPage = lazyScreen(() => import("./payables.tsx"), "PayablesPage");
const ProviderCreate = lazyScreen(() => import("./providers.tsx"), "ProviderCreate");
const ProviderEdit = lazyScreen(() => import("./providers.tsx"), "ProviderEdit");
const ProviderList = lazyScreen(() => import("./providers.tsx"), "ProviderList");
const ProviderShow = lazyScreen(() => import("./providers.tsx"), "ProviderShow");
const RequestList = lazyScreen(() => import("./requests.tsx"), "RequestList");
const RequestShow = lazyScreen(() => import("./requests.tsx"), "RequestShow");
const ReturnsPage = lazyScreen(() => import("./returns.tsx"), "ReturnsPage");

export function App() {
  return (
    <ConsoleApp
      basename="/admin"
      title="Lead Provider back office"
      dashboard={Dashboard}
      dataProvider={dataProvider}
      authProvider={authProvider}
      loginPage={LoginPage}
      layout={Layout}
      requireAuth
    >
      <Resource
        name="providers"
        list={ProviderList}
        create={ProviderCreate}
        edit={ProviderEdit}
        show={ProviderShow}
        icon={StorefrontIcon}
        recordRepresentation="name"
      />
      <Resource
        name="leads"
        list={LeadList}
        show={LeadShow}
        icon={LocalShippingIcon}
        recordRepresentation="order_number"
      />
      <Resource
        name="requests"
        list={RequestList}
        show={RequestShow}
        icon={ReceiptLongIcon}
        options={{ label: "Request log" }}
        recordRepresentation="request_id"
      />
      <Resource name="audit" list={AuditList} icon={HistoryIcon} options={{ label: "Audit log" }} />
      <Resource name="payables" list={PayablesPage} icon={AccountBalanceIcon} options={{ label: "Payables" }} />
      <Resource name="returns" list={ReturnsPage} icon={UndoIcon} options={{ label: "Returns" }} />
      <CustomRoutes noLayout>
        <Route path={FORBIDDEN_PATH} element={<ForbiddenPage />} />
        <Route
          path="/consents/:id"
          element={
            <Suspense fallback={<Loading />}>
              <ConsentRecordPage />
            </Suspense>
          }
        />
      </CustomRoutes>
    </ConsoleApp>
  );
}
