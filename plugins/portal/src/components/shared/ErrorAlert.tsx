/*
 * The refusal a dialog shows after a failed call: a danger alert announced to screen readers
 * (role "alert"), its title saying what did not happen and its description the server's message.
 */
import { Alert, type AlertProps } from '@backstage/ui';
import { errorMessage } from './errors';

/** Props of {@link ErrorAlert}: an Alert's layout props besides the title and the error. */
export interface ErrorAlertProps extends Omit<
  AlertProps,
  'title' | 'description' | 'status' | 'role' | 'icon'
> {
  /** What did not happen, e.g. "The product was not deleted". */
  title: string;
  /** The failure; nothing is shown while it is undefined. */
  error: unknown;
}

/** A danger alert with the server's message for `error`, or nothing when there is no error. */
export function ErrorAlert(props: ErrorAlertProps) {
  const { title, error, ...layout } = props;
  if (error === undefined) return null;
  return (
    <Alert
      {...layout}
      role="alert"
      status="danger"
      icon
      title={title}
      description={errorMessage(error)}
    />
  );
}
