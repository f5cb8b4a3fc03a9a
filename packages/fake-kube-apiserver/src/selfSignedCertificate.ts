/**
 * A throwaway self-signed certificate for 127.0.0.1, made per server start,
 * so the fake speaks HTTPS like a real API server and clients trust it the
 * realistic way (`certificate-authority-data` in the kubeconfig).
 */
import { generateKeyPairSync } from 'node:crypto';
import selfsigned from 'selfsigned';

/** PEM-encoded certificate and key. */
export interface SelfSignedCertificate {
  cert: string;
  key: string;
}

let shared: SelfSignedCertificate | undefined;

/**
 * A certificate valid for `127.0.0.1` and `localhost`, made on first use and
 * shared by the servers of one process (an RSA key costs 50–300 ms).
 */
export function selfSignedCertificate(): SelfSignedCertificate {
  shared ??= createSelfSignedCertificate();
  return shared;
}

function createSelfSignedCertificate(): SelfSignedCertificate {
  // Node generates the key (fast, native); selfsigned/node-forge only signs.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const pems = selfsigned.generate([{ name: 'commonName', value: 'fake-kube-apiserver' }], {
    days: 2,
    algorithm: 'sha256',
    keyPair: { privateKey, publicKey },
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  } as selfsigned.SelfsignedOptions);
  return { cert: pems.cert, key: pems.private };
}
