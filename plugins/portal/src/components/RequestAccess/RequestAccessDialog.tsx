/*
 * Request access to a product: a plan tier (from the product's plans), a use case (at most 1000
 * characters, counted as one types) and an optional expiry (future dates only). A product in
 * automatic approval mode says so before anything is sent. For an MCP product (contract
 * mcp-access §8) each plan shows its tool-call quotas and the dialog says that no key is issued.
 * The server decides; its refusal (a pending request for the same tier, a Draft product, a
 * server gone from the catalog, …) is shown as it says it.
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
  Text,
} from '@backstage/ui';
import { isMcpTarget, type ApiKey, type ApiProduct } from '@devportal/plugin-portal-common';
import type { DateValue } from '@internationalized/date';
import { useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { expiresAtOf, RequestFields } from './RequestFields';
import { requestablePlans } from '../McpProduct/mcpPlans';

/** What the dialog says, for a product with keys and for an MCP product. */
const WORDING = {
  key: {
    automatic:
      'This product approves requests at once: your key is ready to reveal on My keys as soon as you send this.',
    approvedTitle: 'Your key is approved',
    approved: 'Reveal its secret once on My keys.',
    expiry: 'A future date; leave empty for a key that does not expire.',
  },
  mcp: {
    automatic:
      'This product approves requests automatically: access is granted at once, as soon as you send this.',
    approvedTitle: 'You have access',
    approved: 'Your tools appear in your MCP client now; see them on MCP tools.',
    expiry: 'A future date; leave empty for access that does not expire.',
  },
};

/** Said for every MCP product: what approval gives instead of a key. */
export const NO_KEY_LINE =
  'No key is issued: you use the MCP broker with your own sign-in. Your tools appear in your IDE as soon as the request is approved.';

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
  const plans = requestablePlans(product);
  const mcp = isMcpTarget(product.spec.targetRef);
  const wording = mcp ? WORDING.mcp : WORDING.key;
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
                  description={wording.automatic}
                />
              )}
              {mcp && <Text>{NO_KEY_LINE}</Text>}
              <RequestFields
                plans={plans}
                planTier={planTier}
                onPlanTierChange={setPlanTier}
                planTierDescription="This product has no plans; name the tier you need."
                useCase={useCase}
                onUseCaseChange={setUseCase}
                expiry={expiry}
                onExpiryChange={setExpiry}
                expiryDescription={wording.expiry}
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
              title={created.status?.phase === 'Approved' ? wording.approvedTitle : 'Request sent'}
              description={
                created.status?.phase === 'Approved'
                  ? wording.approved
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
