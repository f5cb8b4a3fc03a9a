import {
  NODE_NETWORK_ERROR_CODES,
  describeKubernetesFailure,
  isTimeoutOrNetworkError,
  kubernetesApiStatusOf,
} from './kubernetesFailures';

/** The shape of client-node's ApiException (code, body as text). */
function apiException(code: number, body: unknown) {
  return Object.assign(new Error(`HTTP-Code: ${code}`), { code, body });
}

describe('kubernetesApiStatusOf', () => {
  it('reads the Status from a JSON body, plain text, or no body', () => {
    expect(
      kubernetesApiStatusOf(
        apiException(409, JSON.stringify({ reason: 'AlreadyExists', message: 'taken' })),
      ),
    ).toEqual({ code: 409, reason: 'AlreadyExists', message: 'taken' });
    expect(kubernetesApiStatusOf(apiException(404, '404 page not found\n'))).toEqual({
      code: 404,
      reason: undefined,
      message: '404 page not found',
    });
    expect(kubernetesApiStatusOf(apiException(401, undefined))).toEqual({
      code: 401,
      reason: undefined,
      message: undefined,
    });
  });

  it('is undefined for errors that are not an answer (string codes, no code, non-errors)', () => {
    expect(kubernetesApiStatusOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(
      undefined,
    );
    expect(kubernetesApiStatusOf(new Error('x'))).toBeUndefined();
    expect(kubernetesApiStatusOf({ code: 500 })).toBeUndefined();
  });
});

describe('isTimeoutOrNetworkError', () => {
  it('finds timeouts and network codes anywhere in a short cause chain', () => {
    const refused = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    expect(isTimeoutOrNetworkError(new TypeError('fetch failed', { cause: refused }))).toBe(true);
    expect(isTimeoutOrNetworkError(new DOMException('late', 'TimeoutError'))).toBe(true);
    expect(
      isTimeoutOrNetworkError(Object.assign(new Error('tls'), { code: 'CERT_HAS_EXPIRED' })),
    ).toBe(true);
    for (const code of NODE_NETWORK_ERROR_CODES) {
      expect(isTimeoutOrNetworkError(Object.assign(new Error(code), { code }))).toBe(true);
    }
  });

  it('is false for answers of the API server and for bugs', () => {
    expect(isTimeoutOrNetworkError(apiException(503, '{}'))).toBe(false);
    expect(isTimeoutOrNetworkError(new TypeError('x is undefined'))).toBe(false);
  });
});

describe('describeKubernetesFailure', () => {
  it('gives status and reason, never the body', () => {
    const error = apiException(403, JSON.stringify({ reason: 'Forbidden', message: 'sekrit' }));
    expect(describeKubernetesFailure(error)).toBe('HTTP 403 Forbidden');
    expect(describeKubernetesFailure(apiException(401, undefined))).toBe('HTTP 401');
    expect(describeKubernetesFailure(new Error('socket hang up'))).toBe('socket hang up');
  });
});
