import { mockServices } from '@backstage/backend-test-utils';
import { BrokerTelemetry } from './BrokerTelemetry';
import { withTraceIds } from './traceLogger';
import { InMemoryTelemetry } from './__testUtils__/inMemoryTelemetry';

describe('withTraceIds', () => {
  const sdk = new InMemoryTelemetry();
  beforeAll(() => sdk.install());
  afterAll(() => sdk.uninstall());

  it('puts the trace id of the request being served on every line logged while it runs, and nothing on other lines', async () => {
    const inner = mockServices.logger.mock();
    const child = mockServices.logger.mock();
    inner.child.mockReturnValue(child);
    const logger = withTraceIds(inner);
    const request = BrokerTelemetry.create(sdk).clientRequest({
      method: 'tools/call',
      era: 'legacy',
      headers: {},
    });
    await request.run(async () => {
      await new Promise(resolve => setImmediate(resolve));
      logger.warn('backend failed', { server: 'x' });
    });
    logger.info('outside any request');

    expect(inner.child).toHaveBeenCalledWith({
      traceId: request.traceId,
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(child.warn).toHaveBeenCalledWith('backend failed', { server: 'x' });
    expect(inner.info).toHaveBeenCalledWith('outside any request', undefined);
    expect(inner.child).toHaveBeenCalledTimes(1);
    request.end({ outcome: 'succeeded' });
  });
});
