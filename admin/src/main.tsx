import { mount } from "../../ui/src/mount.tsx";
import { App } from "./App.tsx";
import { adoptTokenFromFragment } from "./session.ts";

// A token handed over in the URL fragment is kept in this tab and removed from the address bar first.
adoptTokenFromFragment();

mount(<App />);
