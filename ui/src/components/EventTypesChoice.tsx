import { Checkbox, FormControl, FormControlLabel, FormGroup, FormLabel, Radio, RadioGroup } from "@mui/material";
import { useId } from "react";

/** One event type a webhook can receive, described in words. */
export interface EventTypeOption {
  readonly type: string;
  readonly description: string;
}

/**
 * Which events a webhook receives: every type (also types added later; `null`) or the ones
 * ticked. Ticking none is not offered as a choice: the last box cannot be cleared (clearing the
 * URL is how a webhook stops).
 */
export function EventTypesChoice(props: {
  options: readonly EventTypeOption[];
  value: readonly string[] | null;
  onChange: (value: string[] | null) => void;
  disabled?: boolean;
}) {
  const id = useId();
  const { options, value } = props;
  const chosen = value ?? options.map((o) => o.type);
  const toggle = (type: string, on: boolean) => {
    const next = options.map((o) => o.type).filter((t) => (t === type ? on : chosen.includes(t)));
    if (next.length > 0) props.onChange(next);
  };
  return (
    <FormControl component="fieldset" disabled={props.disabled} sx={{ my: 1 }}>
      <FormLabel component="legend" id={`${id}-legend`}>
        Events sent to the webhook
      </FormLabel>
      <RadioGroup
        aria-labelledby={`${id}-legend`}
        value={value === null ? "all" : "chosen"}
        onChange={(e) => props.onChange(e.target.value === "all" ? null : [...chosen])}
      >
        <FormControlLabel value="all" control={<Radio />} label="Every event, including kinds added later" />
        <FormControlLabel value="chosen" control={<Radio />} label="Only the events ticked below" />
      </RadioGroup>
      {value !== null && (
        <FormGroup aria-label="Events to send" sx={{ pl: 3 }}>
          {options.map((o) => (
            <FormControlLabel
              key={o.type}
              control={
                <Checkbox
                  checked={chosen.includes(o.type)}
                  disabled={chosen.length === 1 && chosen.includes(o.type)}
                  onChange={(e) => toggle(o.type, e.target.checked)}
                />
              }
              label={o.description}
            />
          ))}
        </FormGroup>
      )}
    </FormControl>
  );
}

/** A subscription in a sentence: "every event" or the descriptions of the chosen ones. */
export function describeEventTypes(options: readonly EventTypeOption[], value: readonly string[] | null): string {
  if (value === null) return "every event, including kinds added later";
  return options
    .filter((o) => value.includes(o.type))
    .map((o) => o.description.charAt(0).toLowerCase() + o.description.slice(1))
    .join("; ");
}
