import { Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle } from "@mui/material";
import type { ReactNode } from "react";

/**
 * A confirmation whose button has the colour of what it does (red for what cannot be undone
 * or takes something away), with the consequences spelled out.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirm: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const id = `confirm-${props.title.replace(/\W+/g, "-").toLowerCase()}`;
  return (
    <Dialog open={props.open} onClose={props.onClose} aria-labelledby={id}>
      <DialogTitle id={id}>{props.title}</DialogTitle>
      <DialogContent>
        <DialogContentText component="div">{props.children}</DialogContentText>
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>Cancel</Button>
        <Button
          variant="contained"
          color={props.danger ? "error" : "primary"}
          disabled={props.busy}
          onClick={props.onConfirm}
        >
          {props.confirm}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
