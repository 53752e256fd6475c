import { Table, TableBody, TableCell, TableHead, TableRow } from "@mui/material";
import type { ReactNode } from "react";
import { Scrolls } from "./Scrolls.tsx";

/** A header cell: its text, right-aligned for numbers, or read only by screen readers (an actions column). */
export type Column = string | { name: string; align?: "right"; hidden?: boolean };

/**
 * A small table named for screen readers, with one header row, that scrolls inside itself on a
 * narrow screen. `region` makes the scroller a named region a keyboard can focus; the rows are
 * the children.
 */
export function DataTable(props: { label: string; columns: Column[]; region?: boolean; children: ReactNode }) {
  return (
    <Scrolls {...(props.region && { label: props.label })}>
      <Table size="small" aria-label={props.label}>
        <TableHead>
          <TableRow>
            {props.columns.map((c) => {
              const { name, align, hidden }: Exclude<Column, string> = typeof c === "string" ? { name: c } : c;
              return (
                <TableCell key={name} align={align}>
                  {hidden ? <span className="visually-hidden">{name}</span> : name}
                </TableCell>
              );
            })}
          </TableRow>
        </TableHead>
        <TableBody>{props.children}</TableBody>
      </Table>
    </Scrolls>
  );
}

/** Columns of numbers: right-aligned. */
export const numeric = (...names: string[]): Column[] => names.map((name) => ({ name, align: "right" }));
