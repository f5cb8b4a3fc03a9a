/*
 * Edit a Pending request: its plan tier (from the product's plans), use case and expiry. The
 * server refuses (409) once the request was decided meanwhile; the dialog says so.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Dialog, DialogBody, DialogHeader, Flex } from '@backstage/ui';
import type { ApiKey, UpdateApiKeyRequest } from '@devportal/plugin-portal-common';
import { parseDate, type DateValue } from '@internationalized/date';
import { useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';
import { expiresAtOf, RequestFields } from '../RequestAccess/RequestFields';

/** Props of {@link EditRequestDialog}. */
export interface EditRequestDialogProps {
  apiKey: ApiKey;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  onSaved: () => void;
}

/** The edit request dialog (mounted while open). */
export function EditRequestDialog(props: EditRequestDialogProps) {
  const { apiKey } = props;
  const portal = useApi(portalApiRef);
  const product = useAsyncData(
    () =>
      portal.getApiProduct({
        namespace: apiKey.metadata.namespace,
        name: apiKey.spec.apiProductRef.name,
      }),
    [portal, apiKey],
  );
  const plans = product.value?.status?.plans ?? [];
  const [planTier, setPlanTier] = useState(apiKey.spec.planTier);
  const [useCase, setUseCase] = useState(apiKey.spec.useCase ?? '');
  const [expiry, setExpiry] = useState<DateValue | null>(
    apiKey.spec.expiresAt ? parseDate(apiKey.spec.expiresAt.slice(0, 10)) : null,
  );
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>();

  const save = async () => {
    setSaving(true);
    setError(undefined);
    const body: UpdateApiKeyRequest = {};
    if (planTier !== apiKey.spec.planTier) body.planTier = planTier;
    if (useCase !== (apiKey.spec.useCase ?? '')) body.useCase = useCase;
    const expiresAt = expiry === null ? null : expiresAtOf(expiry);
    if ((expiresAt ?? undefined) !== apiKey.spec.expiresAt) body.expiresAt = expiresAt;
    try {
      await portal.updateRequest(apiKey.metadata, body);
      props.onSaved();
    } catch (e) {
      setError(e);
      setSaving(false);
    }
  };

  return (
    <Dialog isOpen={props.isOpen} onOpenChange={props.onOpenChange} width={560}>
      <DialogHeader>Edit request {apiKey.metadata.name}</DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="4">
          <RequestFields
            plans={plans}
            planTier={planTier}
            onPlanTierChange={setPlanTier}
            useCase={useCase}
            onUseCaseChange={setUseCase}
            expiry={expiry}
            onExpiryChange={setExpiry}
          />
          <ErrorAlert title="The request was not changed" error={error} />
        </Flex>
      </DialogBody>
      <DialogActions
        onCancel={() => props.onOpenChange(false)}
        actionLabel="Save"
        onAction={save}
        isPending={saving}
      />
    </Dialog>
  );
}
