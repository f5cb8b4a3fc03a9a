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
import type {
  Page,
  PageRequest,
  ReadOnlyKind,
  ReadOnlyObject,
} from '../store/types';
import type {
  ApiProductPatch,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  RequestQuery,
  ReviewDecision,
  UpdateApiKeyRequest,
} from './types';

/**
 * The portal API as the router sees it: every method takes the caller's credentials.
 * Lists answer one page when given a {@link PageRequest} (its cursor already unsealed
 * from the client's token), otherwise the whole list as one page without cursor.
 */
export interface PortalService {
  listProducts(
    credentials: BackstageCredentials,
    query: { namespace?: string },
    page?: PageRequest,
  ): Promise<Page<ApiProduct>>;
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
    page?: PageRequest,
  ): Promise<Page<ReadOnlyObject>>;
  getPlanPolicy(
    credentials: BackstageCredentials,
    ref: ObjectRef,
  ): Promise<ReadOnlyObject>;
  listRequests(
    credentials: BackstageCredentials,
    query: RequestQuery,
    page?: PageRequest,
  ): Promise<Page<ApiKey>>;
  listMyRequests(
    credentials: BackstageCredentials,
    query: { namespace?: string },
    page?: PageRequest,
  ): Promise<Page<ApiKey>>;
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
