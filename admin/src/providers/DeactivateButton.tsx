import { Button } from "@mui/material";
import { useState } from "react";
import { useNotify, useRecordContext, useUpdate } from "react-admin";
import { ConfirmDialog } from "../../../ui/src/components/ConfirmDialog.tsx";
import type { Schemas } from "../api.ts";
import { reason } from "./Panel.tsx";

/** Deactivates the provider after a confirmation (its keys are refused while inactive). */
export function DeactivateButton() {
  const record = useRecordContext<Schemas["Provider"]>();
  const [open, setOpen] = useState(false);
  const [update, { isPending }] = useUpdate();
  const notify = useNotify();
  if (!record?.is_active) return null;
  return (
    <>
      <Button color="error" onClick={() => setOpen(true)}>
        Deactivate
      </Button>
      <ConfirmDialog
        open={open}
        busy={isPending}
        danger
        title={`Deactivate ${record.name}?`}
        confirm="Deactivate"
        onClose={() => setOpen(false)}
        onConfirm={() =>
          update(
            "providers",
            { id: record.id, data: { is_active: false }, previousData: record },
            {
              mutationMode: "pessimistic",
              onSuccess: () => {
                setOpen(false);
                notify(`${record.name} deactivated`, { type: "success" });
              },
              onError: (err) => notify(reason(err), { type: "error" }),
            },
          )
        }
      >
        Its API keys are refused (401) until it is activated again with Edit. Its leads, keys and settings stay.
      </ConfirmDialog>
    </>
  );
}
