/** The frame of the pages a person sees before signing in (sign-in, the invite): one card, centred. */
import { Box, Card, CardContent } from "@mui/material";
import type { ReactNode } from "react";

export function OpenPage({ children }: { children: ReactNode }) {
  return (
    <Box component="main" sx={{ minHeight: "100vh", display: "grid", placeItems: "center", p: 2, bgcolor: "#eef2f7" }}>
      <Card sx={{ width: "100%", maxWidth: 440 }}>
        <CardContent>{children}</CardContent>
      </Card>
    </Box>
  );
}
