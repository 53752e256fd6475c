/** react-admin's layout with the kit's app bar: the user menu named after the signed-in administrator. */
import type { ReactNode } from "react";
import { Layout as RaLayout } from "react-admin";
import { NamedAppBar } from "../../ui/src/components/AppBar.tsx";

export function Layout({ children }: { children: ReactNode }) {
  return <RaLayout appBar={NamedAppBar}>{children}</RaLayout>;
}
