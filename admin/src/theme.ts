/**
 * react-admin's default theme with darker brand colours, so text on them meets WCAG AA contrast,
 * and a name for the app bar's loading spinner (a progressbar needs one: axe's
 * aria-progressbar-name), which it shows whenever a request is in flight.
 */
import { defaultTheme, type RaThemeOptions } from "react-admin";

export const theme: RaThemeOptions = {
  ...defaultTheme,
  palette: {
    ...defaultTheme.palette,
    primary: { main: "#1e4d8c" },
    secondary: { main: "#263238" },
  },
  components: {
    ...defaultTheme.components,
    // react-admin's LoadingIndicator passes its other props on to the CircularProgress.
    RaLoadingIndicator: { defaultProps: { "aria-label": "Loading" } },
  } as RaThemeOptions["components"],
};
