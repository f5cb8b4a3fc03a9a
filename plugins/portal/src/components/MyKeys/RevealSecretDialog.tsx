/*
 * The one-time secret (spec portal-ui §2). Reveal is an explicit step after a warning; the secret
 * then lives only in this dialog's state — never in storage, the URL or a log — in a masked field
 * with show/hide and copy, and is gone when the dialog closes. A 409 (revealed elsewhere first)
 * is explained as what happened, not shown as a failure.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  Alert,
  Button,
  Dialog,
  DialogBody,
  DialogFooter,
  DialogHeader,
  Flex,
  PasswordField,
  Text,
} from '@backstage/ui';
import type { ApiKey } from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { ErrorAlert } from '../shared/ErrorAlert';
import { statusOf } from '../shared/errors';

type RevealState =
  | { step: 'confirm' }
  | { step: 'revealing' }
  | { step: 'shown'; secret: string; copied: boolean }
  | { step: 'already-revealed' }
  | { step: 'failed'; error: unknown };

/** Props of {@link RevealSecretDialog}. */
export interface RevealSecretDialogProps {
  apiKey: ApiKey;
  isOpen: boolean;
  /** Called when the dialog closes; `revealed` when the server has marked the secret read. */
  onClose: (revealed: boolean) => void;
}

/** The reveal dialog (mount it only while open: its state is the secret's only home). */
export function RevealSecretDialog(props: RevealSecretDialogProps) {
  const portal = useApi(portalApiRef);
  const [state, setState] = useState<RevealState>({ step: 'confirm' });
  const ref = { namespace: props.apiKey.metadata.namespace, name: props.apiKey.metadata.name };

  const reveal = async () => {
    setState({ step: 'revealing' });
    try {
      const { apiKey } = await portal.revealApiKeySecret(ref);
      setState({ step: 'shown', secret: apiKey, copied: false });
    } catch (error) {
      setState(statusOf(error) === 409 ? { step: 'already-revealed' } : { step: 'failed', error });
    }
  };
  const copy = async (secret: string) => {
    await navigator.clipboard.writeText(secret);
    setState({ step: 'shown', secret, copied: true });
  };
  // The server marked the secret read once it answered (or answered 409).
  const close = () => props.onClose(state.step === 'shown' || state.step === 'already-revealed');

  return (
    <Dialog isOpen={props.isOpen} onOpenChange={open => (open ? undefined : close())} width={560}>
      <DialogHeader>API key for {props.apiKey.spec.apiProductRef.name}</DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="4">
          {(state.step === 'confirm' || state.step === 'revealing') && (
            <Alert
              status="warning"
              icon
              title="The secret can be shown only once"
              description="After you close this dialog nobody can show it again, you included. Have a password manager or secret store ready to keep it."
            />
          )}
          {state.step === 'shown' && (
            <>
              <Alert
                role="status"
                status="success"
                icon
                title="Copy the secret now"
                description="It is not stored in this browser and will not be shown again once you close this dialog."
              />
              <PasswordField label="API key secret" value={state.secret} isReadOnly />
              {state.copied && (
                <Text role="status" color="secondary">
                  Copied to the clipboard.
                </Text>
              )}
            </>
          )}
          {state.step === 'already-revealed' && (
            <Alert
              role="alert"
              status="info"
              icon
              title="This secret was already revealed"
              description="It was shown once before (in another window or on another device) and cannot be shown again. If it was not kept, delete this key and request a new one."
            />
          )}
          {state.step === 'failed' && (
            <ErrorAlert title="The secret could not be revealed" error={state.error} />
          )}
        </Flex>
      </DialogBody>
      <DialogFooter>
        {state.step === 'shown' ? (
          <>
            <Button variant="secondary" onPress={() => copy(state.secret)}>
              Copy secret
            </Button>
            <Button variant="primary" onPress={close}>
              I have stored it, close
            </Button>
          </>
        ) : (
          <>
            <Button variant="secondary" onPress={close}>
              {state.step === 'confirm' || state.step === 'revealing' ? 'Cancel' : 'Done'}
            </Button>
            {(state.step === 'confirm' || state.step === 'revealing') && (
              <Button variant="primary" onPress={reveal} isPending={state.step === 'revealing'}>
                Reveal secret
              </Button>
            )}
          </>
        )}
      </DialogFooter>
    </Dialog>
  );
}
