/** react-admin's default theme with darker brand and error colours, so text on them meets WCAG AA contrast. */
import { defaultTheme, type RaThemeOptions } from "react-admin";

export const theme: RaThemeOptions = {
  ...defaultTheme,
  palette: {
    ...defaultTheme.palette,
    primary: { main: "#1e4d8c" },
    secondary: { main: "#263238" },
    // Red that white text on it (a destructive action's button) still reads at WCAG AA.
    error: { main: "#c62828" },
  },
};
