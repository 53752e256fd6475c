/** react-admin's layout with a user menu named after the signed-in administrator (its visible text). */
import type { ReactNode } from "react";
import { AppBar, LoadingIndicator, Logout, Layout as RaLayout, UserMenu, useGetIdentity } from "react-admin";

function NamedUserMenu() {
  const { identity } = useGetIdentity();
  return (
    <UserMenu label={identity?.fullName ? String(identity.fullName) : "Profile"}>
      <Logout />
    </UserMenu>
  );
}

/**
 * The app bar's spinner, named: react-admin's LoadingIndicator shows an unnamed progressbar while a
 * request is in flight (axe: aria-progressbar-name) and passes its other props on to it. Set here,
 * on this one component, rather than in the theme (a theme change moved other components' colours).
 */
const loadingName = { "aria-label": "Loading" } as Record<string, string>;
const NamedLoadingIndicator = () => <LoadingIndicator {...loadingName} />;

// The console has one locale and one theme: the default toolbar's other buttons never show.
const NamedAppBar = () => <AppBar userMenu={<NamedUserMenu />} toolbar={<NamedLoadingIndicator />} />;

export function Layout({ children }: { children: ReactNode }) {
  return <RaLayout appBar={NamedAppBar}>{children}</RaLayout>;
}
