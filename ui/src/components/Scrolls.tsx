import { Box } from "@mui/material";
import type { ReactNode } from "react";

/** A table that scrolls inside itself on a narrow screen instead of widening the page. */
export function Scrolls({ children, label }: { children: ReactNode; label?: string }) {
  // position: relative keeps absolutely placed children (screen-reader-only text) inside the scroll.
  // With a label it is a named region a keyboard can focus and scroll (axe: scrollable-region-focusable).
  return (
    <Box
      {...(label !== undefined && { tabIndex: 0, role: "region", "aria-label": label })}
      sx={{
        overflowX: "auto",
        maxWidth: "100%",
        position: "relative",
        // Words stay whole (the page around may break anywhere); headers stay on one line.
        "& td, & th": { overflowWrap: "normal" },
        "& th": { whiteSpace: "nowrap" },
      }}
    >
      {children}
    </Box>
  );
}
