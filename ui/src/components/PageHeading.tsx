/**
 * The page's one level-one heading. Screens of their own show it (`<PageHeading>`); a list or a
 * record page, whose title react-admin already shows in the app bar, has it for screen readers
 * only (`hidden`; `RecordHeading` names the record), so every page has exactly one h1.
 */
import { Typography } from "@mui/material";
import type { ReactNode } from "react";
import { useGetRecordRepresentation, useGetResourceLabel, useRecordContext, useResourceContext } from "react-admin";

export function PageHeading({ children, hidden = false }: { children: ReactNode; hidden?: boolean }) {
  return (
    <Typography component="h1" variant="h5" gutterBottom={!hidden} className={hidden ? "visually-hidden" : undefined}>
      {children}
    </Typography>
  );
}

/** A record page's h1 for screen readers: "Provider Acme Shipping", "Lead LP-1042". */
export function RecordHeading() {
  const resource = useResourceContext() ?? "";
  const record = useRecordContext();
  const label = useGetResourceLabel();
  const represent = useGetRecordRepresentation(resource);
  return (
    <PageHeading hidden>
      {label(resource, 1)}
      {record ? ` ${String(represent(record))}` : ""}
    </PageHeading>
  );
}

/** A list page's h1 for screen readers: the resource's plural name or the list's title. */
export function ListHeading({ title }: { title?: string }) {
  const resource = useResourceContext() ?? "";
  const label = useGetResourceLabel();
  return <PageHeading hidden>{title ?? label(resource, 2)}</PageHeading>;
}
