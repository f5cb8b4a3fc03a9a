/*
 * The request types the client package publishes (@devportal/plugin-portal-common) are the
 * inputs the router validates: checked by the compiler (`yarn tsc`), in both directions, so
 * a body the client can build is accepted and the router expects nothing the client lacks.
 */
import type {
  BulkReviewRequest,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  UpdateApiKeyRequest,
} from '@devportal/plugin-portal-common';
import type { z } from 'zod';
import type { operationInputs } from './operationInputs';

/** `true` when each type is assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Body<K extends keyof typeof operationInputs> = (typeof operationInputs)[K] extends {
  body: z.ZodTypeAny;
}
  ? z.input<(typeof operationInputs)[K]['body']>
  : never;

const sameTypes: {
  createApiProduct: Same<Body<'createApiProduct'>, CreateApiProductRequest>;
  createRequest: Same<Body<'createRequest'>, CreateApiKeyRequest>;
  updateRequest: Same<Body<'updateRequest'>, UpdateApiKeyRequest>;
  bulkApproveRequests: Same<Body<'bulkApproveRequests'>, BulkReviewRequest>;
} = {
  createApiProduct: true,
  createRequest: true,
  updateRequest: true,
  bulkApproveRequests: true,
};

describe('client request types', () => {
  it('are the bodies the router validates (a compile-time check)', () => {
    expect(Object.values(sameTypes)).toEqual([true, true, true, true]);
  });
});
