/* One key of a Kubernetes Secret as text, for the registration mapping. */
import { RegistrationError, type RegistrationLookups } from './registrationTypes';

/**
 * One key of a Secret as text (one line, not empty); errors name the Secret and key, never the
 * value.
 */
export async function readSecretValue(
  namespace: string,
  name: string,
  key: string,
  lookups: RegistrationLookups,
): Promise<string> {
  const secret = await lookups.secret(namespace, name);
  if (!secret) throw new RegistrationError(`Secret ${namespace}/${name} not found`);
  const encoded = secret.data?.[key];
  if (encoded === undefined)
    throw new RegistrationError(`Secret ${namespace}/${name} has no key "${key}"`);
  const value = Buffer.from(encoded, 'base64').toString('utf8').trim();
  if (value === '' || /[\r\n]/.test(value)) {
    throw new RegistrationError(`Secret ${namespace}/${name} key "${key}" is empty or spans lines`);
  }
  return value;
}
