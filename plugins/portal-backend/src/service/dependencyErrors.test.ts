/*
 * Which failures of the auth and permission backends the portal answers 503 (retry later) and
 * which it passes on, on the errors those calls really throw: Backstage's ResponseError built
 * from an HTTP answer, and fetch's error for a connection that is refused.
 */
import net from 'node:net';
import { NotAllowedError, ResponseError } from '@backstage/errors';
import { mapDependencyError } from './dependencyErrors';

async function responseError(status: number): Promise<ResponseError> {
  return ResponseError.fromResponse(
    new Response(JSON.stringify({ error: { name: 'Error', message: 'from the other plugin' } }), {
      status,
      headers: { 'Content-Type': 'application/json' },
    }),
  );
}

/** fetch's error for a port nobody listens on (bound, then closed). */
async function refusedFetchError(): Promise<unknown> {
  const server = net.createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise(resolve => server.close(resolve));
  return fetch(`http://127.0.0.1:${port}/`).then(
    () => undefined,
    error => error,
  );
}

describe('mapDependencyError', () => {
  it('answers 503 naming the dependency when it fails (5xx), is overloaded (429) or unreachable', async () => {
    for (const error of [
      await responseError(500),
      await responseError(503),
      await responseError(429),
      await refusedFetchError(),
    ]) {
      const mapped = mapDependencyError(error, 'permission backend');
      expect(mapped).toMatchObject({
        name: 'ServiceUnavailableError',
        message: 'The permission backend is unavailable right now; retry later',
      });
    }
  });

  it('passes on real answers about the request (4xx) and errors that are no dependency failure', async () => {
    const forbidden = await responseError(403);
    const notFound = await responseError(404);
    const denied = new NotAllowedError('no');
    const bug = new TypeError('x is undefined');
    for (const error of [forbidden, notFound, denied, bug]) {
      expect(mapDependencyError(error, 'permission backend')).toBe(error);
    }
  });
});
