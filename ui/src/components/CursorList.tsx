import { Box, Typography } from "@mui/material";
import type { ReactNode } from "react";
import { List, type ListProps, useResourceDefinition } from "react-admin";
import { CursorPagination } from "./CursorPagination.tsx";
import { ListHeading } from "./PageHeading.tsx";
import { TimeZoneNote } from "./TimeZoneNote.tsx";

/** What an empty list says when no filter narrows it: that nothing is there yet, and what to do. */
export function EmptyList({ children }: { children: ReactNode }) {
  return (
    <Box sx={{ p: 3 }} role="status">
      <Typography>{children}</Typography>
    </Box>
  );
}

/**
 * A cursor-paged list: 25 rows a page, paging that says only what it knows, and no react-admin
 * exporter (the back office's lists export every matching row with their own button). Its title
 * is the page's h1 (for screen readers; the app bar shows it); `emptyHint` is what an empty list
 * with no filter tells the reader to do; `times` says that its timestamps are in the viewer's time
 * zone (TimeZoneNote).
 */
export function CursorList({
  emptyHint,
  times = false,
  ...props
}: ListProps & { emptyHint?: ReactNode; times?: boolean }) {
  const definition = useResourceDefinition();
  const title = typeof props.title === "string" ? props.title : definition.options?.label;
  return (
    <>
      <ListHeading title={title} />
      {times && <TimeZoneNote />}
      <List
        perPage={25}
        pagination={<CursorPagination />}
        exporter={false}
        empty={emptyHint ? <EmptyList>{emptyHint}</EmptyList> : undefined}
        {...props}
      />
    </>
  );
}
