/*
 * The portal API as the router sees it: every method takes the caller's credentials and
 * returns records the caller may see. AuthorizedPortalService implements it.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type {
  ApiKey,
  ApiProduct,
  BulkReviewResult,
  ObjectRef,
} from '@devportal/plugin-portal-common';
import type { ReadOnlyKind, ReadOnlyObject } from '../store/types';
import type {
  ApiProductPatch,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  RequestQuery,
  ReviewDecision,
  UpdateApiKeyRequest,
} from './types';

/** The portal API as the router sees it: every method takes the caller's credentials. */
export interface PortalService {
  listProducts(
    credentials: BackstageCredentials,
    query: { namespace?: string },
  ): Promise<ApiProduct[]>;
  getProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
  ): Promise<ApiProduct>;
  createProduct(
    credentials: BackstageCredentials,
    request: CreateApiProductRequest,
  ): Promise<ApiProduct>;
  updateProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    patch: ApiProductPatch,
  ): Promise<ApiProduct>;
  deleteProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
  ): Promise<void>;
  listReadOnly(
    credentials: BackstageCredentials,
    kind: ReadOnlyKind,
    query: { namespace?: string },
  ): Promise<ReadOnlyObject[]>;
  getPlanPolicy(
    credentials: BackstageCredentials,
    ref: ObjectRef,
  ): Promise<ReadOnlyObject>;
  listRequests(
    credentials: BackstageCredentials,
    query: RequestQuery,
  ): Promise<ApiKey[]>;
  listMyRequests(
    credentials: BackstageCredentials,
    query: { namespace?: string },
  ): Promise<ApiKey[]>;
  createRequest(
    credentials: BackstageCredentials,
    request: CreateApiKeyRequest,
  ): Promise<ApiKey>;
  updateRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    update: UpdateApiKeyRequest,
  ): Promise<ApiKey>;
  deleteRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
  ): Promise<void>;
  reviewRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    decision: ReviewDecision,
    reason?: string,
  ): Promise<ApiKey>;
  bulkReview(
    credentials: BackstageCredentials,
    refs: ObjectRef[],
    decision: ReviewDecision,
    reason?: string,
  ): Promise<BulkReviewResult[]>;
  revealSecret(
    credentials: BackstageCredentials,
    ref: ObjectRef,
  ): Promise<string>;
}
