/*
 * Edit a product's fields: a JSON merge patch of what changed, with the product's
 * resourceVersion as a precondition, so an edit made elsewhere meanwhile is refused (409) and
 * said so instead of being overwritten.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Dialog, DialogBody, DialogHeader, Flex } from '@backstage/ui';
import type { ApiProduct } from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { portalApiRef } from '../../apis/PortalApi';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';
import { statusOf } from '../shared/errors';
import { ProductFieldsForm } from './ProductFieldsForm';
import { fieldsOf, patchBody, type ProductFields } from './productFields';

/** Props of {@link EditProductDialog}. */
export interface EditProductDialogProps {
  product: ApiProduct;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  onSaved: (product: ApiProduct) => void;
}

/** The edit dialog (mounted while open, with the product's current fields). */
export function EditProductDialog(props: EditProductDialogProps) {
  const portal = useApi(portalApiRef);
  const [fields, setFields] = useState<ProductFields>(() => fieldsOf(props.product));
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>();

  const save = async () => {
    setSaving(true);
    setError(undefined);
    try {
      const saved = await portal.updateApiProduct(
        props.product.metadata,
        patchBody(props.product, fields),
      );
      props.onSaved(saved);
    } catch (e) {
      setError(e);
      setSaving(false);
    }
  };

  return (
    <Dialog isOpen={props.isOpen} onOpenChange={props.onOpenChange} width={720}>
      <DialogHeader>Edit {props.product.spec.displayName}</DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="4">
          <ProductFieldsForm fields={fields} onChange={setFields} />
          <ErrorAlert
            title={
              statusOf(error) === 409
                ? 'Someone changed this product meanwhile; reload it and edit again'
                : 'The changes were not saved'
            }
            error={error}
          />
        </Flex>
      </DialogBody>
      <DialogActions
        onCancel={() => props.onOpenChange(false)}
        actionLabel="Save"
        onAction={save}
        isPending={saving}
        isDisabled={fields.displayName.trim() === ''}
      />
    </Dialog>
  );
}
