import { randomInt } from 'node:crypto';

// Kubernetes' generateName alphabet: no vowels (no accidental words) and no look-alikes.
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const SUFFIX_LENGTH = 8;
const MAX_DNS_LABEL_LENGTH = 63;

/**
 * A name for a new API key: `<product>-<8 random characters>`, a DNS-1123 label (the
 * product part is shortened when the whole would exceed 63 characters).
 */
export function generateKeyName(productName: string): string {
  const prefix = productName.slice(0, MAX_DNS_LABEL_LENGTH - SUFFIX_LENGTH - 1).replace(/-+$/, '');
  let suffix = '';
  for (let i = 0; i < SUFFIX_LENGTH; i++) {
    suffix += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  }
  return prefix === '' ? suffix : `${prefix}-${suffix}`;
}
