/**
 * A list row's way in for the keyboard: its first cell as a real link to the record (Tab reaches
 * it, Enter opens it), where a click anywhere on the row opens the same page. `to` gives the
 * path; by default the record's show page in the current resource.
 */
import type { ReactNode } from "react";
import { type RaRecord, useCreatePath, useRecordContext, useResourceContext } from "react-admin";
import { Link } from "react-router-dom";

export function RowLink(props: {
  source: string;
  label?: string;
  sortable?: boolean;
  to?: (record: RaRecord) => string;
  render?: (record: RaRecord) => ReactNode;
}) {
  const record = useRecordContext();
  const resource = useResourceContext();
  const createPath = useCreatePath();
  if (!record) return null;
  const to = props.to ? props.to(record) : createPath({ resource, id: record.id, type: "show" });
  return (
    // The row's own click handler would open the page a second time.
    <Link to={to} onClick={(e) => e.stopPropagation()}>
      {props.render ? props.render(record) : String(record[props.source] ?? "—")}
    </Link>
  );
}

/**
 * The same way in for a phone's list (SimpleList, with `linkType={false}`: a row that is itself
 * a button around a link is a nested control): the row's headline as a real link to `to`.
 */
export function ItemLink({ to, children }: { to: string; children: ReactNode }) {
  return (
    <Link to={to} onClick={(e) => e.stopPropagation()}>
      {children}
    </Link>
  );
}
