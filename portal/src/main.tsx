import { mount } from "../../ui/src/mount.tsx";
import { App } from "./App.tsx";
import { adoptInviteFromFragment, adoptResetFromFragment } from "./session.ts";

// An invite or reset link's token (#invite=…, #reset=…) is kept in this tab and removed from the address bar first.
adoptInviteFromFragment();
adoptResetFromFragment();

mount(<App />);
