/*
 * The confirmation before a person deletes their stored credential for an MCP server: the
 * broker stops presenting it at once, and their next call to that server asks for a new one.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Dialog, DialogBody, DialogHeader, Flex, Text } from '@backstage/ui';
import { useState } from 'react';
import { mcpBrokerApiRef } from '../../apis/McpBrokerApi';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';

/** Props of {@link DeleteConnectionDialog}. */
export interface DeleteConnectionDialogProps {
  server: string;
  /** Called once the dialog closes; `deleted` when the broker deleted the credential. */
  onClose: (deleted: boolean) => void;
}

/** Deletes the person's credential for `server` after a confirmation. */
export function DeleteConnectionDialog(props: DeleteConnectionDialogProps) {
  const { server, onClose } = props;
  const broker = useApi(mcpBrokerApiRef);
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState<unknown>();
  const remove = async () => {
    setDeleting(true);
    setError(undefined);
    try {
      await broker.deleteConnection(server);
      onClose(true);
    } catch (failure) {
      setError(failure);
      setDeleting(false);
    }
  };
  return (
    <Dialog isOpen onOpenChange={open => (open ? undefined : onClose(false))} width={480}>
      <DialogHeader>Delete your credential for {server}</DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="3">
          <Text>
            The MCP broker stops presenting it at once; your next call to {server} asks you to store
            one again.
          </Text>
          <ErrorAlert title="Nothing was deleted" error={error} />
        </Flex>
      </DialogBody>
      <DialogActions
        cancelLabel="Keep it"
        actionLabel="Delete credential"
        onAction={remove}
        onCancel={() => onClose(false)}
        isPending={deleting}
        destructive
      />
    </Dialog>
  );
}
