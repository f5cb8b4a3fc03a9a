/*
 * The action row of a dialog that asks before it changes something: a secondary button that
 * leaves without a change and the primary one that does the change (pending while it runs).
 */
import { Button, DialogFooter } from '@backstage/ui';
import type { ReactNode } from 'react';

/** Props of {@link DialogActions}. */
export interface DialogActionsProps {
  /** The primary button's label, e.g. "Save". */
  actionLabel: ReactNode;
  onAction: () => void;
  /** The secondary button's label; "Cancel" unless given. */
  cancelLabel?: ReactNode;
  onCancel: () => void;
  /** The action is running: the primary button shows it and takes no second press. */
  isPending?: boolean;
  isDisabled?: boolean;
  /** The action deletes or revokes something. */
  destructive?: boolean;
}

/** A dialog's footer: leave without a change, or do the change. */
export function DialogActions(props: DialogActionsProps) {
  return (
    <DialogFooter>
      <Button variant="secondary" onPress={props.onCancel}>
        {props.cancelLabel ?? 'Cancel'}
      </Button>
      <Button
        variant="primary"
        destructive={props.destructive}
        onPress={props.onAction}
        isPending={props.isPending}
        isDisabled={props.isDisabled}
      >
        {props.actionLabel}
      </Button>
    </DialogFooter>
  );
}
