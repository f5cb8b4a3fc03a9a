/*
 * Request access to a product: a plan tier (from the product's plans), a use case (at most 1000
 * characters, counted as one types) and an optional expiry (future dates only). A product in
 * automatic approval mode says so before anything is sent. The server decides; its refusal
 * (a pending request for the same tier, a Draft product, …) is shown as it says it.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  Alert,
  Button,
  ButtonLink,
  Dialog,
  DialogBody,
  DialogFooter,
  DialogHeader,
  Flex,
} from '@backstage/ui';
import type { ApiKey, ApiProduct } from '@devportal/plugin-portal-common';
import type { DateValue } from '@internationalized/date';
import { useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { expiresAtOf, RequestFields } from './RequestFields';

/** Props of {@link RequestAccessDialog}. */
export interface RequestAccessDialogProps {
  product: ApiProduct;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  /** Called with the created key (Pending, or Approved for automatic approval). */
  onRequested?: (key: ApiKey) => void;
}

/** The request access dialog. */
export function RequestAccessDialog(props: RequestAccessDialogProps) {
  const { product } = props;
  const portal = useApi(portalApiRef);
  const paths = usePortalPaths();
  const plans = product.status?.plans ?? [];
  const [planTier, setPlanTier] = useState<string>(plans[0]?.tier ?? '');
  const [useCase, setUseCase] = useState('');
  const [expiry, setExpiry] = useState<DateValue | null>(null);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<ApiKey>();
  const automatic = product.spec.approvalMode === 'automatic';

  const close = () => {
    props.onOpenChange(false);
    setCreated(undefined);
    setError(undefined);
  };
  const send = async () => {
    setSending(true);
    setError(undefined);
    try {
      const key = await portal.createRequest({
        apiProductRef: { namespace: product.metadata.namespace, name: product.metadata.name },
        planTier,
        ...(useCase.trim() !== '' && { useCase }),
        ...(expiry !== null && { expiresAt: expiresAtOf(expiry) }),
      });
      setCreated(key);
      props.onRequested?.(key);
    } catch (e) {
      setError(e);
    } finally {
      setSending(false);
    }
  };

  return (
    <Dialog isOpen={props.isOpen} onOpenChange={open => (open ? undefined : close())} width={560}>
      <DialogHeader>Request access to {product.spec.displayName}</DialogHeader>
      {created === undefined ? (
        <>
          <DialogBody>
            <Flex direction="column" gap="4">
              {automatic && (
                <Alert
                  status="info"
                  icon
                  title="Approved automatically"
                  description="This product approves requests at once: your key is ready to reveal on My keys as soon as you send this."
                />
              )}
              <RequestFields
                plans={plans}
                planTier={planTier}
                onPlanTierChange={setPlanTier}
                planTierDescription="This product has no plans; name the tier you need."
                useCase={useCase}
                onUseCaseChange={setUseCase}
                expiry={expiry}
                onExpiryChange={setExpiry}
                expiryDescription="A future date; leave empty for a key that does not expire."
              />
              <ErrorAlert title="The request was not sent" error={error} />
            </Flex>
          </DialogBody>
          <DialogActions
            onCancel={close}
            actionLabel="Send request"
            onAction={send}
            isPending={sending}
            isDisabled={planTier.trim() === ''}
          />
        </>
      ) : (
        <>
          <DialogBody>
            <Alert
              role="status"
              status="success"
              icon
              title={created.status?.phase === 'Approved' ? 'Your key is approved' : 'Request sent'}
              description={
                created.status?.phase === 'Approved'
                  ? 'Reveal its secret once on My keys.'
                  : "The product's owners were notified; you will be notified of their decision."
              }
            />
          </DialogBody>
          <DialogFooter>
            <ButtonLink href={paths.keys} variant="secondary">
              Go to My keys
            </ButtonLink>
            <Button variant="primary" onPress={close}>
              Done
            </Button>
          </DialogFooter>
        </>
      )}
    </Dialog>
  );
}
