/*
 * The confirmation before a key request is deleted: cancelling a Pending request, revoking an
 * Approved key (its secret is deleted, so it stops working at once) or removing a Rejected one.
 * Used by the requester on My keys and by an admin on All keys (who is told whose key it is,
 * and may give a reason the requester is notified with); an MCP product's owners revoke access
 * with it on the product page (`revoke`: the revoke route, which owners may use).
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Dialog, DialogBody, DialogHeader, Flex, Text, TextAreaField } from '@backstage/ui';
import type { ApiKey, ApiKeyPhase } from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { MAX_USE_CASE_LENGTH } from '../RequestAccess/RequestFields';
import { DialogActions } from './DialogActions';
import { ErrorAlert } from './ErrorAlert';
import { shortEntityRef } from './format';

const DELETE_VERBS: Record<ApiKeyPhase, string> = {
  Pending: 'Cancel request',
  Approved: 'Revoke key',
  Rejected: 'Delete key',
};
const DELETE_CONSEQUENCES: Record<ApiKeyPhase, string> = {
  Pending: 'The request is withdrawn; the owners will not see it any more.',
  Approved: 'The key stops working at once and its secret is deleted.',
  Rejected: 'The rejected request is removed from the list.',
};

/** Props of {@link DeleteKeyDialog}. */
export interface DeleteKeyDialogProps {
  apiKey: ApiKey;
  /** Called once the dialog closes; `changed` when the key was deleted. */
  onClose: (changed: boolean) => void;
  /** Someone else's key (an admin's view): the dialog names its requester. */
  othersKey?: boolean;
  /** Revoke an Approved key through `POST /requests/:ns/:name/revoke` (its product's owners may). */
  viaRevoke?: boolean;
  /** What happens, instead of the phase's usual consequence (an MCP access request has no secret). */
  consequence?: string;
}

/** Cancels a Pending request, or deletes (revokes) a decided key, after a confirmation. */
export function DeleteKeyDialog(props: DeleteKeyDialogProps) {
  const portal = useApi(portalApiRef);
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState<unknown>();
  const [reason, setReason] = useState('');
  const phaseKey = props.apiKey.status?.phase ?? 'Rejected';
  const verb = props.viaRevoke ? 'Revoke access' : DELETE_VERBS[phaseKey];
  const remove = async () => {
    setDeleting(true);
    try {
      const trimmed = reason.trim();
      const because = props.othersKey && trimmed !== '' ? { reason: trimmed } : {};
      if (props.viaRevoke) {
        await portal.revokeRequest(props.apiKey.metadata, because);
      } else {
        await portal.deleteRequest(props.apiKey.metadata, because);
      }
      props.onClose(true);
    } catch (e) {
      setError(e);
      setDeleting(false);
    }
  };
  return (
    <Dialog isOpen onOpenChange={open => (open ? undefined : props.onClose(false))} width={480}>
      <DialogHeader>
        {verb} {props.apiKey.metadata.name}
      </DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="3">
          {props.othersKey && (
            <Text>
              Requested by {shortEntityRef(props.apiKey.spec.requestedBy.userId)} for{' '}
              {props.apiKey.metadata.namespace}/{props.apiKey.spec.apiProductRef.name} (
              {props.apiKey.spec.planTier}).
            </Text>
          )}
          <Text>{props.consequence ?? DELETE_CONSEQUENCES[phaseKey]}</Text>
          {props.othersKey && (
            <TextAreaField
              label="Reason (optional)"
              description={`Sent to the requester with the notification · ${reason.length}/${MAX_USE_CASE_LENGTH}`}
              value={reason}
              onChange={setReason}
              maxLength={MAX_USE_CASE_LENGTH}
            />
          )}
          <ErrorAlert title="Nothing was deleted" error={error} />
        </Flex>
      </DialogBody>
      <DialogActions
        cancelLabel="Keep it"
        onCancel={() => props.onClose(false)}
        actionLabel={verb}
        onAction={remove}
        isPending={deleting}
        destructive
      />
    </Dialog>
  );
}
