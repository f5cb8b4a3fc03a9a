/*
 * Edit a Pending request: its plan tier (from the product's plans), use case and expiry. The
 * server refuses (409) once the request was decided meanwhile; the dialog says so.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  Alert,
  Button,
  DatePicker,
  Dialog,
  DialogBody,
  DialogFooter,
  DialogHeader,
  Flex,
  Select,
  TextAreaField,
  TextField,
} from '@backstage/ui';
import type { ApiKey, UpdateApiKeyRequest } from '@devportal/plugin-portal-common';
import { getLocalTimeZone, parseDate, today, type DateValue } from '@internationalized/date';
import { useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { errorMessage } from '../shared/errors';
import { MAX_USE_CASE_LENGTH } from '../RequestAccess/RequestAccessDialog';

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
    const expiresAt = expiry === null ? null : `${expiry.toString().slice(0, 10)}T00:00:00Z`;
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
          {plans.length > 0 ? (
            <Select
              label="Plan"
              isRequired
              options={plans.map(plan => ({
                id: plan.tier,
                label: plan.tier,
                description: plan.description,
              }))}
              value={planTier}
              onChange={key => setPlanTier(String(key))}
            />
          ) : (
            <TextField label="Plan tier" isRequired value={planTier} onChange={setPlanTier} />
          )}
          <TextAreaField
            label="Use case"
            description={`${useCase.length}/${MAX_USE_CASE_LENGTH} characters`}
            value={useCase}
            onChange={setUseCase}
            maxLength={MAX_USE_CASE_LENGTH}
          />
          <DatePicker
            label="Expires on (optional)"
            value={expiry}
            onChange={setExpiry}
            minValue={today(getLocalTimeZone()).add({ days: 1 })}
          />
          {error !== undefined && (
            <Alert
              role="alert"
              status="danger"
              icon
              title="The request was not changed"
              description={errorMessage(error)}
            />
          )}
        </Flex>
      </DialogBody>
      <DialogFooter>
        <Button variant="secondary" onPress={() => props.onOpenChange(false)}>
          Cancel
        </Button>
        <Button variant="primary" onPress={save} isPending={saving}>
          Save
        </Button>
      </DialogFooter>
    </Dialog>
  );
}
