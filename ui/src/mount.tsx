/** An app's start: its root component in React's strict mode on the page's #root, with the global styles. */
import { type ReactNode, StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "./styles.css";

export function mount(app: ReactNode): void {
  const root = document.getElementById("root");
  if (!root) throw new Error("no #root element");
  createRoot(root).render(<StrictMode>{app}</StrictMode>);
}
