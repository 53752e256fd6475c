/** The back office at /admin/ (the router's basename): react-admin over the service's own contracts. */

import AccountBalanceIcon from "@mui/icons-material/AccountBalance";
import HistoryIcon from "@mui/icons-material/History";
import LocalShippingIcon from "@mui/icons-material/LocalShipping";
import ReceiptLongIcon from "@mui/icons-material/ReceiptLong";
import StorefrontIcon from "@mui/icons-material/Storefront";
import UndoIcon from "@mui/icons-material/Undo";
import { CustomRoutes, Resource } from "react-admin";
import { Route } from "react-router-dom";
import { ConsoleApp } from "../../ui/src/ConsoleApp.tsx";
import { AuditList } from "./audit.tsx";
import { authProvider, FORBIDDEN_PATH } from "./authProvider.ts";
import { ConsentRecordPage } from "./consents.tsx";
import { Dashboard } from "./dashboard.tsx";
import { dataProvider } from "./dataProvider.ts";
import { ForbiddenPage } from "./ForbiddenPage.tsx";
import { Layout } from "./Layout.tsx";
import { LoginPage } from "./LoginPage.tsx";
import { LeadList, LeadShow } from "./leads.tsx";
import { PayablesPage } from "./payables.tsx";
import { ProviderCreate, ProviderEdit, ProviderList, ProviderShow } from "./providers.tsx";
import { RequestList, RequestShow } from "./requests.tsx";
import { ReturnsPage } from "./returns.tsx";

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
        <Route path="/consents/:id" element={<ConsentRecordPage />} />
      </CustomRoutes>
    </ConsoleApp>
  );
}
