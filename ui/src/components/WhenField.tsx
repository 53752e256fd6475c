/**
 * A record's timestamp in a react-admin list or show page, as every screen writes one (`when`:
 * the viewer's time zone, named). react-admin's DateField writes the browser's local time with
 * no zone.
 */
import { useRecordContext } from "react-admin";
import { when } from "../format.ts";

export function WhenField(props: { source: string; label?: string; sortable?: boolean }) {
  const record = useRecordContext();
  return <span>{when(record?.[props.source] as string | null | undefined)}</span>;
}
