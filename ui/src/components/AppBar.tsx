/** The app bar of both apps: a user menu named after the signed-in person (its visible text), and a named spinner. */
import type { ReactNode } from "react";
import { AppBar, LoadingIndicator, Logout, UserMenu, useGetIdentity } from "react-admin";

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

/**
 * One locale and one theme: the default toolbar's other buttons never show. Without children the
 * bar shows the page title (react-admin's TitlePortal).
 */
export function NamedAppBar({ children }: { children?: ReactNode }) {
  return (
    <AppBar userMenu={<NamedUserMenu />} toolbar={<NamedLoadingIndicator />}>
      {children}
    </AppBar>
  );
}
