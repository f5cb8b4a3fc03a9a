/*
 * Deleting a product deletes every API key of it (and their secrets) first (spec portal-api §4).
 * Before anything is sent the dialog counts those keys — walking the key list page by page — and
 * asks for the product's name to be typed, so nobody revokes consumers' keys by a stray click.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Alert, Dialog, DialogBody, DialogHeader, Flex, Text, TextField } from '@backstage/ui';
import type { ApiProduct } from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { portalApiRef, type PortalApi } from '../../apis/PortalApi';
import { useAsyncData } from '../../hooks/useAsyncData';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';
import { errorMessage } from '../shared/errors';
import { productKeysIn } from '../shared/productKeysIn';

/** The number of API keys (any phase) of a product that the caller can see. */
export async function countProductKeys(portal: PortalApi, product: ApiProduct): Promise<number> {
  const keys = await productKeysIn(
    portal.listRequestsPages({ namespace: product.metadata.namespace }),
    product,
  );
  return keys.length;
}

/** Props of {@link DeleteProductDialog}. */
export interface DeleteProductDialogProps {
  product: ApiProduct;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  onDeleted: () => void;
}

/** The delete confirmation dialog (mounted only while open, so the count is fresh). */
export function DeleteProductDialog(props: DeleteProductDialogProps) {
  const { product } = props;
  const portal = useApi(portalApiRef);
  const keys = useAsyncData(() => countProductKeys(portal, product), [portal, product]);
  const [typed, setTyped] = useState('');
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState<unknown>();
  const name = product.metadata.name;

  const remove = async () => {
    setDeleting(true);
    setError(undefined);
    try {
      await portal.deleteApiProduct(product.metadata);
      props.onDeleted();
    } catch (e) {
      setError(e);
      setDeleting(false);
    }
  };

  let consequence: string;
  if (keys.loading) consequence = 'Counting the API keys of this product…';
  else if (keys.error !== undefined)
    consequence = `The API keys of this product could not be counted (${errorMessage(
      keys.error,
    )}); every key of it will be deleted.`;
  else if (keys.value === 0) consequence = 'This product has no API keys.';
  else
    consequence = `${keys.value} API ${
      keys.value === 1 ? 'key' : 'keys'
    } of this product will be deleted with it, and their secrets revoked.`;

  return (
    <Dialog isOpen={props.isOpen} onOpenChange={props.onOpenChange} width={520}>
      <DialogHeader>Delete {product.spec.displayName}</DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="4">
          <Alert status="warning" icon title="This cannot be undone" description={consequence} />
          <TextField
            label={`Type ${name} to confirm`}
            value={typed}
            onChange={setTyped}
            autoComplete="off"
          />
          <ErrorAlert title="The product was not deleted" error={error} />
          <Text color="secondary" variant="body-small">
            Deletes {product.metadata.namespace}/{name}.
          </Text>
        </Flex>
      </DialogBody>
      <DialogActions
        onCancel={() => props.onOpenChange(false)}
        actionLabel="Delete product"
        onAction={remove}
        isPending={deleting}
        isDisabled={typed !== name || keys.loading}
        destructive
      />
    </Dialog>
  );
}
