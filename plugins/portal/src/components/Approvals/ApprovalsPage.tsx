/*
 * `/portal/approvals`: the Pending requests the person may decide — the server's list of Pending
 * requests they can read, narrowed to those `portal.apikey.approve` allows them for (asked per
 * request, with its resource ref, as the server will decide it). Filters by namespace (server
 * side), product and kind (API key or MCP access, from each request's product: one queue for
 * both, contract mcp-access §8, with the MCP server named and the plan's quotas shown); several
 * can be approved or rejected at once with one reason, and the answer shows each request's own
 * result (the server moves each one on its own, so some may conflict).
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import {
  Alert,
  Button,
  Flex,
  List,
  ListRow,
  SearchField,
  Select,
  Text,
  TextAreaField,
  TextField,
  type ColumnConfig,
} from '@backstage/ui';
import {
  portalApiKeyApprovePermission,
  portalApiKeyReadAllPermission,
  portalApiKeyReadOwnPermission,
  type ApiKey,
  type BulkReviewResult,
  type PageQuery,
} from '@devportal/plugin-portal-common';
import { useCallback, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { portalApiRef } from '../../apis/PortalApi';
import { usePagedTable } from '../../hooks/usePagedTable';
import { useScopedDecision } from '../../hooks/usePermissions';
import { useReviewerRole } from '../../hooks/useReviewerRole';
import { ErrorAlert } from '../shared/ErrorAlert';
import { formatDateTime, refText, shortEntityRef } from '../shared/format';
import { PagedTable } from '../shared/PagedTable';
import { NothingToReview } from '../Reviewer/NothingToReview';
import { EmptyState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { MAX_USE_CASE_LENGTH } from '../RequestAccess/RequestFields';
import { TextCell } from '../shared/TextCell';
import {
  grantedTargetText,
  keyKindOf,
  withProducts,
  type KeyKind,
  type KeyWithProduct,
  type ProductCache,
} from '../shared/keyProducts';
import { tierQuotaText } from '../McpProduct/mcpPlans';

type RequestRow = KeyWithProduct;

const toRow = (key: ApiKey): RequestRow => ({ id: refText(key.metadata), key });

/** The queue's server-side filter (namespace) and its filter by kind. */
interface QueueFilter {
  namespace: string;
  kind: KeyKind | 'all';
}

const KIND_OPTIONS = [
  { id: 'all', label: 'All kinds' },
  { id: 'API key', label: 'API key' },
  { id: 'MCP access', label: 'MCP access' },
];

/** Whether a request's product name contains the (lower-case) search text. */
const productMatches = (row: RequestRow, search: string) =>
  row.key.spec.apiProductRef.name.toLowerCase().includes(search);

/** The most requests one bulk call takes (spec portal-api §4). */
export const MAX_BULK_REQUESTS = 100;

/** The table's selection: every row, or the chosen rows' ids. */
type Selection = 'all' | Set<string | number>;

type Outcome = { decision: 'approve' | 'reject'; results: BulkReviewResult[] };

/** The approval queue page: for people who may read key requests (`.own` or `.all`). */
export function ApprovalsPage() {
  const read = useScopedDecision(portalApiKeyReadOwnPermission, portalApiKeyReadAllPermission);
  const role = useReviewerRole();
  if (read.loading || role === undefined) return <LoadingState what="pending requests" />;
  if (!read.own && !read.all) {
    return <ForbiddenState what="key requests" permission={portalApiKeyReadOwnPermission.name} />;
  }
  if (role === 'none') {
    return (
      <NothingToReview
        title="Nothing for you to approve"
        description="Key requests appear here for the API products you own. You own none, so there is nothing to decide; your own requests and keys are on My keys."
      />
    );
  }
  return <ApprovalQueue />;
}

function ApprovalQueue() {
  const portal = useApi(portalApiRef);
  const permissionApi = useApi(permissionApiRef);
  const [params] = useSearchParams();
  const [namespace, setNamespace] = useState(params.get('namespace') ?? '');
  const [kind, setKind] = useState<QueueFilter['kind']>('all');
  const products = useMemo<ProductCache>(() => new Map(), []);
  const [selected, setSelected] = useState<Selection>(new Set());
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState<'approve' | 'reject'>();
  const [outcome, setOutcome] = useState<Outcome>();
  const [error, setError] = useState<unknown>();

  const load = useCallback(
    (page: PageQuery, filter: QueueFilter | undefined) =>
      portal.listRequests({
        status: 'Pending',
        ...(filter !== undefined && filter.namespace !== '' && { namespace: filter.namespace }),
        ...page,
      }),
    [portal],
  );
  const keep = useCallback(
    async (listed: RequestRow[]) => {
      const rows = (await withProducts(portal, listed, products)).filter(
        row => kind === 'all' || keyKindOf(row.product) === kind,
      );
      const decisions = await Promise.all(
        rows.map(row =>
          permissionApi.authorize({
            permission: portalApiKeyApprovePermission,
            resourceRef: row.id,
          }),
        ),
      );
      return rows.filter((_, i) => decisions[i].result === AuthorizeResult.ALLOW);
    },
    [permissionApi, portal, products, kind],
  );
  const filter = useMemo(() => ({ namespace: namespace.trim(), kind }), [namespace, kind]);
  const table = usePagedTable({
    load,
    toItem: toRow,
    keep,
    matches: productMatches,
    filter,
  });
  const rows = table.tableProps.data ?? [];
  const chosen =
    selected === 'all' ? rows.map(r => r.id) : rows.filter(r => selected.has(r.id)).map(r => r.id);

  const decide = async (decision: 'approve' | 'reject') => {
    setBusy(decision);
    setError(undefined);
    setOutcome(undefined);
    const body = {
      requests: chosen.slice(0, MAX_BULK_REQUESTS).map(id => {
        const [ns, ...name] = id.split('/');
        return { namespace: ns, name: name.join('/') };
      }),
      ...(reason.trim() !== '' && { reason: reason.trim() }),
    };
    try {
      const answer =
        decision === 'approve'
          ? await portal.bulkApproveRequests(body)
          : await portal.bulkRejectRequests(body);
      setOutcome({ decision, results: answer.results });
      setSelected(new Set());
      setReason('');
      table.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(undefined);
    }
  };

  const columns: ColumnConfig<RequestRow>[] = [
    {
      id: 'requester',
      label: 'Requested by',
      isRowHeader: true,
      cell: ({ key }) => (
        <TextCell
          title={shortEntityRef(key.spec.requestedBy.userId)}
          description={key.spec.requestedBy.email}
        />
      ),
    },
    {
      id: 'kind',
      label: 'Kind',
      cell: ({ product }) => <TextCell title={keyKindOf(product) ?? '—'} />,
    },
    {
      id: 'product',
      label: 'Product',
      cell: ({ key, product }) => (
        <TextCell
          title={key.spec.apiProductRef.name}
          description={[key.metadata.namespace, grantedTargetText(product)]
            .filter(text => text !== undefined)
            .join(' · ')}
        />
      ),
    },
    {
      id: 'plan',
      label: 'Plan',
      cell: ({ key, product }) => (
        <TextCell
          title={key.spec.planTier}
          description={tierQuotaText(product, key.spec.planTier)}
        />
      ),
    },
    {
      id: 'useCase',
      label: 'Use case',
      cell: ({ key }) => <TextCell title={key.spec.useCase ?? '—'} />,
    },
    {
      id: 'requested',
      label: 'Requested',
      cell: ({ key }) => (
        <TextCell
          title={formatDateTime(key.metadata.creationTimestamp)}
          description={key.metadata.name}
        />
      ),
    },
  ];

  return (
    <Flex direction="column" gap="4">
      <Flex gap="3" align="end" style={{ flexWrap: 'wrap' }}>
        <TextField
          label="Namespace"
          description="Only requests in this namespace"
          value={namespace}
          onChange={setNamespace}
        />
        <SearchField
          label="Product"
          description="Only requests for products whose name contains this"
          value={table.search.value}
          onChange={table.search.onChange}
        />
        <Select
          label="Kind"
          description="API keys, MCP access, or both"
          options={KIND_OPTIONS}
          value={kind}
          onChange={key => setKind((key ?? 'all') as QueueFilter['kind'])}
        />
      </Flex>
      <PagedTable
        label="Pending requests"
        table={table}
        columns={columns}
        permission={portalApiKeyReadOwnPermission.name}
        selection={{
          mode: 'multiple',
          selected,
          onSelectionChange: keys => setSelected(keys as Selection),
        }}
        emptyState={
          <EmptyState
            title="No pending requests to decide"
            description="Requests for the products you may approve appear here."
          />
        }
      />
      <Flex direction="column" gap="3">
        <TextAreaField
          label="Reason (optional)"
          description={`Sent to every requester of the selected requests · ${reason.length}/${MAX_USE_CASE_LENGTH}`}
          value={reason}
          onChange={setReason}
          maxLength={MAX_USE_CASE_LENGTH}
        />
        <Flex gap="2" align="center">
          <Button
            // A disabled primary keeps its dark fill in @backstage/ui's theme and looks
            // pressable: with nothing selected it is drawn like the other disabled button.
            variant={chosen.length === 0 ? 'secondary' : 'primary'}
            isDisabled={chosen.length === 0 || busy !== undefined}
            isPending={busy === 'approve'}
            onPress={() => decide('approve')}
          >
            Approve selected ({chosen.length})
          </Button>
          <Button
            variant="secondary"
            isDisabled={chosen.length === 0 || busy !== undefined}
            isPending={busy === 'reject'}
            onPress={() => decide('reject')}
          >
            Reject selected ({chosen.length})
          </Button>
          {chosen.length > MAX_BULK_REQUESTS && (
            <Text color="secondary">
              The first {MAX_BULK_REQUESTS} are sent; decide the rest afterwards.
            </Text>
          )}
        </Flex>
      </Flex>
      <ErrorAlert title="Nothing was decided" error={error} />
      {outcome !== undefined && <BulkOutcome outcome={outcome} />}
    </Flex>
  );
}

/** Each request's result of one bulk call, in the order sent. */
function BulkOutcome(props: { outcome: Outcome }) {
  const { decision, results } = props.outcome;
  const done = results.filter(r => r.success).length;
  const verb = decision === 'approve' ? 'approved' : 'rejected';
  return (
    <Flex direction="column" gap="2">
      <Alert
        role="status"
        status={done === results.length ? 'success' : 'warning'}
        icon
        title={`${done} of ${results.length} ${verb}`}
      />
      <List aria-label="Results of the bulk decision">
        {results.map(result => (
          <ListRow key={refText(result)} id={refText(result)} textValue={refText(result)}>
            {result.success
              ? `${refText(result)}: ${verb}`
              : `${refText(result)}: not ${verb} — ${result.error.message}`}
          </ListRow>
        ))}
      </List>
    </Flex>
  );
}
