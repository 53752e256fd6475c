import { List, type ListProps } from "react-admin";
import { CursorPagination } from "./CursorPagination.tsx";

/**
 * A cursor-paged list: 25 rows a page, paging that says only what it knows, and no react-admin
 * exporter (the back office's lists export every matching row with their own button).
 */
export function CursorList(props: ListProps) {
  return <List perPage={25} pagination={<CursorPagination />} exporter={false} {...props} />;
}
