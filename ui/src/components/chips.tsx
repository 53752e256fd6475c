/** The marks a lead carries on every screen: its state, and TEST for sandbox data. */
import { Alert, Chip } from "@mui/material";

/** Dark enough on white for WCAG AA in the outlined chip. */
const STATE_COLOURS: Record<string, string> = { LEAD: "#0d47a1", QUOTE: "#7a3d00", ORDER: "#1b5e20" };

export function StateChip({ state }: { state: string | null | undefined }) {
  if (!state) return <span>—</span>;
  const colour = STATE_COLOURS[state] ?? "#333";
  return (
    <Chip size="small" variant="outlined" label={state} sx={{ color: colour, borderColor: colour, fontWeight: 600 }} />
  );
}

/** Test (sandbox) data, marked so it is never taken for a real lead. */
export function TestChip() {
  return <Chip size="small" label="TEST" sx={{ bgcolor: "#5d4037", color: "#fff", fontWeight: 700 }} />;
}

export function TestBanner({ what }: { what: string }) {
  return (
    <Alert severity="warning" icon={false} role="note" sx={{ mb: 1, fontWeight: 600 }}>
      TEST — this {what} was made with a test key (sandbox): it is not a real customer and never billed.
    </Alert>
  );
}
