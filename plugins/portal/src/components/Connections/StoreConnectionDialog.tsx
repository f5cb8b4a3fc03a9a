/*
 * Stores (or replaces) a person's credential for one MCP server. The value lives only in this
 * dialog's state while it is typed, goes to the broker once, and is dropped when the dialog
 * closes; the broker never gives it back, so nothing on the page can show it later.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Dialog, DialogBody, DialogHeader, Flex, PasswordField, Text } from '@backstage/ui';
import { useState } from 'react';
import { mcpBrokerApiRef, type McpConnection } from '../../apis/McpBrokerApi';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';

/** Props of {@link StoreConnectionDialog}. */
export interface StoreConnectionDialogProps {
  connection: McpConnection;
  /** The MCP client's URL elicitation this store answers (from the link the person opened). */
  elicitationId?: string;
  /** Called once the dialog closes; `stored` when the broker stored the credential. */
  onClose: (stored: boolean) => void;
}

/** Asks for the credential and stores it; see the file comment. */
export function StoreConnectionDialog(props: StoreConnectionDialogProps) {
  const { connection, elicitationId, onClose } = props;
  const broker = useApi(mcpBrokerApiRef);
  const [value, setValue] = useState('');
  const [storing, setStoring] = useState(false);
  const [error, setError] = useState<unknown>();
  const store = async () => {
    setStoring(true);
    setError(undefined);
    try {
      await broker.storeConnection(connection.server, value, elicitationId);
      onClose(true);
    } catch (failure) {
      setError(failure);
      setStoring(false);
    }
  };
  return (
    <Dialog isOpen onOpenChange={open => (open ? undefined : onClose(false))} width={520}>
      <DialogHeader>Your credential for {connection.server}</DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="3">
          <Text>
            The MCP broker presents it on your calls to {connection.server}, and only on yours. It
            is stored encrypted; nobody can read it back, not even you.
            {connection.stored ? ' Storing a new one replaces the one you stored.' : ''}
          </Text>
          {connection.description !== undefined && (
            <Text color="secondary">{connection.description}</Text>
          )}
          <PasswordField
            label="Credential"
            value={value}
            onChange={setValue}
            isRequired
            autoComplete="off"
          />
          <ErrorAlert title="Nothing was stored" error={error} />
        </Flex>
      </DialogBody>
      <DialogActions
        actionLabel="Store"
        onAction={store}
        onCancel={() => onClose(false)}
        isPending={storing}
        isDisabled={value === ''}
      />
    </Dialog>
  );
}
