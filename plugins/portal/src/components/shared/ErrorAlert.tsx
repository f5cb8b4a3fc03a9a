/*
 * The refusal a dialog shows after a failed call: a danger alert announced to screen readers
 * (role "alert"), its title saying what did not happen and its description the server's message.
 */
import { Alert } from '@backstage/ui';
import { errorMessage } from './errors';

/** Props of {@link ErrorAlert}. */
export interface ErrorAlertProps {
  /** What did not happen, e.g. "The product was not deleted". */
  title: string;
  /** The failure; nothing is shown while it is undefined. */
  error: unknown;
}

/** A danger alert with the server's message for `error`, or nothing when there is no error. */
export function ErrorAlert(props: ErrorAlertProps) {
  if (props.error === undefined) return null;
  return (
    <Alert
      role="alert"
      status="danger"
      icon
      title={props.title}
      description={errorMessage(props.error)}
    />
  );
}
