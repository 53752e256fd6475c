/** What both apps show of a request log entry: the outcomes the filters offer, its problem and its body. */
import { Alert } from "@mui/material";
import type { ReactNode } from "react";
import { useRecordContext } from "react-admin";
import { codeLabel, type Violation, violationSentence, words } from "../labels.ts";

/** A request log entry's outcomes, as the filters offer them. */
export const OUTCOMES = [
  { id: "accepted", name: "Accepted" },
  { id: "rejected", name: "Rejected" },
  { id: "rate_limited", name: "Rate limited" },
  { id: "failed", name: "Failed" },
];

const READ = /^(GET|HEAD) |\/(Get|List|Watch)[A-Z][A-Za-z]*$/;
const CREATE = /^POST \/api\/v1\/public\/leads\/$|\/CreateLead$/;

/**
 * An entry's outcome in words and its colour (each dark enough on white for WCAG AA): a lead the
 * service took is "accepted" (green), a successful read "OK · read" (blue), any other successful
 * call "OK" (teal); refusals keep their outcome's name.
 */
export function outcomeLabel(entry: { status: number; outcome: string; operation?: string | null }): {
  text: string;
  colour: string;
} {
  const op = entry.operation ?? "";
  if (entry.outcome === "accepted") {
    if (CREATE.test(op)) return { text: `${entry.status} accepted`, colour: "#1b5e20" };
    if (READ.test(op)) return { text: `${entry.status} OK · read`, colour: "#0d47a1" };
    return { text: `${entry.status} OK`, colour: "#00564d" };
  }
  const colour = { rejected: "#b71c1c", rate_limited: "#7a3d00", failed: "#4a148c" }[entry.outcome] ?? "#333333";
  return { text: `${entry.status} ${entry.outcome.replace("_", " ")}`, colour };
}

/** An entry's mode: Live, Test, or a dash (refused before a key named one). */
export const modeLabel = (livemode: boolean | null | undefined): string =>
  livemode === true ? "Live" : livemode === false ? "Test" : "—";

/** Why an entry was refused, in words: each field's sentence naming its rule, or the code's words. */
export function refusalSummary(record: { code?: string | null; errors?: readonly Violation[] | null }): string {
  if (!record.code) return "—";
  const errors = record.errors ?? [];
  if (errors.length === 0) return codeLabel(record.code);
  return errors.map(violationSentence).join(" ");
}

/** The entry's problem (in words, each field's sentence naming its rule), or `empty` when it answered without one. */
export function ProblemAlert({ empty = null }: { empty?: ReactNode }) {
  const record = useRecordContext();
  if (!record?.code) return empty;
  const errors = record.errors as Violation[];
  return (
    <Alert severity={record.outcome === "failed" ? "error" : "warning"} sx={{ my: 1 }} data-testid="problem">
      <strong>{codeLabel(record.code)}</strong>
      {record.detail ? `: ${words(record.detail)}` : ""}
      {errors.length > 0 && (
        <ul>
          {errors.map((e) => (
            <li key={`${e.field}:${e.code}`} data-testid="refusal-sentence">
              {violationSentence(e)}
            </li>
          ))}
        </ul>
      )}
    </Alert>
  );
}

/**
 * The body as received (personal data masked), cut at 4 KiB; where none was kept (the back
 * office's entries refused before a key named a provider), its size and SHA-256.
 */
export function RequestBody() {
  const record = useRecordContext();
  if (!record) return null;
  const bytes = typeof record.request_body_bytes === "number" ? `${record.request_body_bytes} bytes` : undefined;
  if (record.request_body === null) {
    if (record.request_body_sha256) {
      return (
        <span data-testid="request-body">
          Not kept (no key named a provider): {bytes}, SHA-256 {record.request_body_sha256}
        </span>
      );
    }
    return <span>—</span>;
  }
  return (
    <>
      <pre data-testid="request-body" style={{ whiteSpace: "pre-wrap", wordBreak: "break-all" }}>
        {JSON.stringify(record.request_body, null, 2)}
      </pre>
      {record.request_body_truncated && <span>Cut to 4 KiB of {bytes}: the members past it were left out.</span>}
    </>
  );
}
