/** How both apps show a return: its state, its reason in words, and the provider's evidence links. */
import { Chip, Link, Stack, Typography } from "@mui/material";

/** Dark enough on white for WCAG AA in the outlined chip. */
const STATE_COLOURS: Record<string, string> = {
  requested: "#0d47a1",
  contested: "#7a3d00",
  approved: "#1b5e20",
  denied: "#b71c1c",
  withdrawn: "#424242",
};

export const RETURN_REASON_WORDS: Record<string, string> = {
  invalid_contact: "Invalid contact details",
  not_requested: "The customer did not ask for a quote",
  out_of_area: "Outside the service area",
  already_shipped: "Already shipped",
  test_or_fraud: "Test or fraudulent lead",
  other: "Other",
};

export const reasonWords = (reason: string): string => RETURN_REASON_WORDS[reason] ?? reason;

export function ReturnStateChip({ state }: { state: string }) {
  const colour = STATE_COLOURS[state] ?? "#333";
  return (
    <Chip
      size="small"
      variant="outlined"
      label={state}
      sx={{ color: colour, borderColor: colour, fontWeight: 600, textTransform: "capitalize" }}
    />
  );
}

export interface EvidenceLike {
  readonly consent_certificate_url?: string | null;
  readonly recording_url?: string | null;
  readonly attachments?: ReadonlyArray<{ readonly name: string; readonly url: string }>;
}

/** The evidence as links that open in a new tab without telling the other site where they came from. */
export function EvidenceLinks({ evidence }: { evidence: EvidenceLike | null | undefined }) {
  const links: [string, string][] = [];
  if (evidence?.consent_certificate_url) links.push(["Consent certificate", evidence.consent_certificate_url]);
  if (evidence?.recording_url) links.push(["Call recording", evidence.recording_url]);
  for (const a of evidence?.attachments ?? []) links.push([a.name, a.url]);
  if (links.length === 0) return <Typography variant="body2">No evidence links.</Typography>;
  return (
    <Stack component="ul" spacing={0.5} sx={{ m: 0, pl: 2 }}>
      {links.map(([name, url]) => (
        <li key={`${name}-${url}`}>
          <Link href={url} target="_blank" rel="noopener noreferrer" sx={{ overflowWrap: "anywhere" }}>
            {name}
          </Link>
        </li>
      ))}
    </Stack>
  );
}
