import { mount } from "../../ui/src/mount.tsx";
import { App } from "./App.tsx";
import { adoptInviteFromFragment } from "./session.ts";

// An invite link's token (#invite=…) is kept in this tab and removed from the address bar first.
adoptInviteFromFragment();

mount(<App />);
