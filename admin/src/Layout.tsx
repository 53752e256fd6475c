/** react-admin's layout with a user menu named after the signed-in administrator (its visible text). */
import type { ReactNode } from "react";
import { AppBar, Logout, Layout as RaLayout, UserMenu, useGetIdentity } from "react-admin";

function NamedUserMenu() {
  const { identity } = useGetIdentity();
  return (
    <UserMenu label={identity?.fullName ? String(identity.fullName) : "Profile"}>
      <Logout />
    </UserMenu>
  );
}

const NamedAppBar = () => <AppBar userMenu={<NamedUserMenu />} />;

export function Layout({ children }: { children: ReactNode }) {
  return <RaLayout appBar={NamedAppBar}>{children}</RaLayout>;
}
