/** A length of time typed in minutes, hours or days, as seconds; the unit a person thinks in. */
import { MenuItem, Stack, TextField } from "@mui/material";
import { span } from "../../../ui/src/format.ts";

const UNITS = [
  { id: "minutes", seconds: 60 },
  { id: "hours", seconds: 3600 },
  { id: "days", seconds: 86_400 },
] as const;
export type Unit = (typeof UNITS)[number]["id"];

/** The longest grace period of a key and overlap of a webhook secret: 7 days. */
export const MAX_GRACE = 7 * 86_400;

export function Duration(props: {
  label: string;
  amount: string;
  unit: Unit;
  max: number;
  onChange: (amount: string, unit: Unit) => void;
}) {
  const seconds = Number(props.amount) * (UNITS.find((u) => u.id === props.unit)?.seconds ?? 1);
  const bad = !Number.isFinite(seconds) || seconds < 0 || seconds > props.max || !/^\d+$/.test(props.amount);
  return (
    <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
      <TextField
        label={props.label}
        type="number"
        value={props.amount}
        onChange={(e) => props.onChange(e.target.value, props.unit)}
        error={bad}
        helperText={bad ? `a whole number, at most ${span(props.max)}` : " "}
        slotProps={{ htmlInput: { min: 0 } }}
        sx={{ flex: 1 }}
      />
      <TextField
        select
        label="Unit"
        value={props.unit}
        onChange={(e) => props.onChange(props.amount, e.target.value as Unit)}
        sx={{ width: 130 }}
      >
        {UNITS.map((u) => (
          <MenuItem key={u.id} value={u.id}>
            {u.id}
          </MenuItem>
        ))}
      </TextField>
    </Stack>
  );
}

export const secondsOf = (amount: string, unit: Unit) =>
  /^\d+$/.test(amount) ? Number(amount) * (UNITS.find((u) => u.id === unit)?.seconds ?? 1) : Number.NaN;
/** Whether a typed length is whole and at most MAX_GRACE (0: at once). */
export const withinGrace = (seconds: number) => Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_GRACE;
