/** react-admin's default theme with darker brand colours, so text on them meets WCAG AA contrast. */
import { defaultTheme, type RaThemeOptions } from "react-admin";

export const theme: RaThemeOptions = {
  ...defaultTheme,
  palette: {
    ...defaultTheme.palette,
    primary: { main: "#1e4d8c" },
    secondary: { main: "#263238" },
  },
};
