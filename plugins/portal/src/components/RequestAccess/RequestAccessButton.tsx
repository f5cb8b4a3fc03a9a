/*
 * "Request access" and the request dialog it opens, for places that offer a product's request
 * beside other things (the entity cards): the button keeps the dialog's open state, and tells the
 * caller when a request was made so its list of the person's requests can load again.
 */
import { Button } from '@backstage/ui';
import type { ApiKey, ApiProduct } from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { RequestAccessDialog } from './RequestAccessDialog';

/** Props of {@link RequestAccessButton}. */
export interface RequestAccessButtonProps {
  product: ApiProduct;
  /** The button's accessible name where "Request access" alone would be ambiguous. */
  label?: string;
  /** Called with the created request. */
  onRequested?: (key: ApiKey) => void;
}

/** A "Request access" button that opens the request dialog for `product`. */
export function RequestAccessButton(props: RequestAccessButtonProps) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button variant="primary" aria-label={props.label} onPress={() => setOpen(true)}>
        Request access
      </Button>
      {open && (
        <RequestAccessDialog
          product={props.product}
          isOpen
          onOpenChange={setOpen}
          onRequested={props.onRequested}
        />
      )}
    </>
  );
}
