/**
 * The form's look, inside its shadow root. A page themes it with these custom properties, set on
 * `lead-quote-form` or any ancestor (docs/forms.md): --lqf-font, --lqf-font-size, --lqf-text,
 * --lqf-muted, --lqf-background, --lqf-field-background, --lqf-border, --lqf-accent,
 * --lqf-accent-text, --lqf-error, --lqf-success, --lqf-radius, --lqf-gap, --lqf-max-width.
 * The defaults meet WCAG AA contrast on white.
 */
export const STYLES = `
:host {
  display: block;
  box-sizing: border-box;
  max-width: var(--lqf-max-width, 40rem);
  font-family: var(--lqf-font, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  font-size: var(--lqf-font-size, 1rem);
  line-height: 1.4;
  color: var(--lqf-text, #1b1f24);
  background: var(--lqf-background, transparent);
}
:host([hidden]) { display: none; }
*, *::before, *::after { box-sizing: border-box; }
form { display: grid; gap: var(--lqf-gap, 1rem); }
fieldset { border: 1px solid var(--lqf-border, #8c959f); border-radius: var(--lqf-radius, 6px); margin: 0; padding: 0.75rem; min-width: 0; display: grid; gap: 0.75rem; }
legend { font-weight: 600; padding: 0 0.25rem; }
.row { display: grid; gap: 0.75rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 11rem), 1fr)); }
.field { display: grid; gap: 0.25rem; min-width: 0; }
label, .label { font-weight: 500; }
input:not([type=checkbox]):not([type=radio]), select {
  font: inherit; color: inherit; width: 100%; min-height: 2.75rem; padding: 0.5rem 0.625rem;
  background: var(--lqf-field-background, #fff); border: 1px solid var(--lqf-border, #8c959f);
  border-radius: var(--lqf-radius, 6px);
}
input:focus-visible, select:focus-visible, button:focus-visible {
  outline: 3px solid var(--lqf-accent, #0b57d0); outline-offset: 2px;
}
[aria-invalid=true] { border-color: var(--lqf-error, #b3261e) !important; border-width: 2px !important; }
.hint { color: var(--lqf-muted, #57606a); font-size: 0.875em; margin: 0; min-height: 1.2em; }
.error { color: var(--lqf-error, #b3261e); font-size: 0.875em; margin: 0; font-weight: 500; }
.error:empty { display: none; }
.radios { display: flex; flex-wrap: wrap; gap: 0.5rem 1.25rem; border: 0; padding: 0; }
.radios legend { padding: 0; margin-bottom: 0.25rem; font-weight: 500; }
.check { display: flex; gap: 0.5rem; align-items: center; min-height: 2.75rem; }
.check input { width: 1.25rem; height: 1.25rem; margin: 0; flex: none; accent-color: var(--lqf-accent, #0b57d0); }
.consent { display: grid; grid-template-columns: auto 1fr; gap: 0.625rem; align-items: start; }
.consent input { width: 1.25rem; height: 1.25rem; margin: 0.1rem 0 0; accent-color: var(--lqf-accent, #0b57d0); }
.consent label { font-weight: 400; font-size: 0.9375em; overflow-wrap: anywhere; }
.consent .error { grid-column: 2; }
button {
  font: inherit; min-height: 2.75rem; padding: 0.5rem 1rem; border-radius: var(--lqf-radius, 6px); cursor: pointer;
  border: 1px solid var(--lqf-accent, #0b57d0); background: var(--lqf-field-background, #fff); color: var(--lqf-accent, #0b57d0);
}
button[type=submit] { background: var(--lqf-accent, #0b57d0); color: var(--lqf-accent-text, #fff); font-weight: 600; }
button:disabled { opacity: 0.6; cursor: progress; }
.remove { justify-self: start; }
.alert { border-left: 4px solid var(--lqf-error, #b3261e); padding: 0.5rem 0.75rem; margin: 0; color: var(--lqf-error, #b3261e); font-weight: 500; overflow-wrap: anywhere; }
.alert:empty, .status:empty { display: none; }
.status { margin: 0; }
.success { border-left: 4px solid var(--lqf-success, #1a7f37); padding: 0.75rem; margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.note { color: var(--lqf-muted, #57606a); font-size: 0.875em; margin: 0; }
.trap { position: absolute !important; left: -10000px; top: auto; width: 1px; height: 1px; overflow: hidden; }
altcha-widget { display: block; }
`;
