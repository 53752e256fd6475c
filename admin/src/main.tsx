import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { adoptTokenFromFragment } from "./session.ts";
import "../../ui/src/styles.css";

// A token handed over in the URL fragment is kept in this tab and removed from the address bar first.
adoptTokenFromFragment();

const root = document.getElementById("root");
if (!root) throw new Error("no #root element");
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
