import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "../../ui/src/styles.css";
import { App } from "./App.tsx";
import { adoptInviteFromFragment } from "./session.ts";

// An invite link's token (#invite=…) is kept in this tab and removed from the address bar first.
adoptInviteFromFragment();

const root = document.getElementById("root");
if (!root) throw new Error("no #root element");
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
