/*
 * `/portal/policies`: the Kuadrant resources the portal reads (HTTPRoutes, PlanPolicies,
 * AuthPolicies, RateLimitPolicies) as read-only tables, each paged through its list route and
 * shown only to holders of its list permission. An HTTPRoute offers "Create product" to people
 * who may create products.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { ButtonLink, Cell, Flex, Text, type ColumnConfig } from '@backstage/ui';
import {
  portalApiProductCreatePermission,
  portalApiProductListPermission,
  portalAuthPolicyListPermission,
  portalPlanPolicyListPermission,
  portalRateLimitPolicyListPermission,
  type ListPage,
  type PageQuery,
  type ReadOnlyObject,
} from '@devportal/plugin-portal-common';
import type { Permission } from '@backstage/plugin-permission-common';
import { useCallback } from 'react';
import { portalApiRef, type PortalApi } from '../../apis/PortalApi';
import { usePagedTable } from '../../hooks/usePagedTable';
import { useDecision } from '../../hooks/usePermissions';
import { refText } from '../shared/format';
import { PagedTable } from '../shared/PagedTable';
import { PermissionGate } from '../shared/PermissionGate';
import { EmptyState } from '../shared/StateViews';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { formatLimits } from '../ProductDetail/PlansTable';
import { TextCell } from '../shared/TextCell';

interface PolicyRow {
  id: string;
  object: ReadOnlyObject;
}

const toRow = (object: ReadOnlyObject): PolicyRow => ({ id: refText(object.metadata), object });

const specOf = (object: ReadOnlyObject) => (object.spec ?? {}) as Record<string, any>;

/** `HTTPRoute toystore` for a policy's target. */
function targetText(object: ReadOnlyObject): string {
  const target = specOf(object).targetRef;
  return target ? `${target.kind ?? ''} ${target.name ?? ''}`.trim() : '—';
}

const nameColumn: ColumnConfig<PolicyRow> = {
  id: 'name',
  label: 'Name',
  isRowHeader: true,
  cell: ({ object }) => (
    <TextCell title={object.metadata.name} description={object.metadata.namespace} />
  ),
};
const targetColumn: ColumnConfig<PolicyRow> = {
  id: 'target',
  label: 'Target',
  cell: ({ object }) => <TextCell title={targetText(object)} />,
};

/** One read-only listing: its heading, permission, list call and columns. */
interface PolicyTableProps {
  title: string;
  permission: Permission;
  load: (portal: PortalApi, page: PageQuery) => Promise<ListPage<ReadOnlyObject>>;
  columns: ColumnConfig<PolicyRow>[];
}

/** A listing under its heading, loaded only for holders of its list permission. */
function PolicyTable(props: PolicyTableProps) {
  return (
    <Flex direction="column" gap="2">
      <Text as="h3" variant="title-small" weight="bold">
        {props.title}
      </Text>
      <PermissionGate permission={props.permission} loading={props.title} what={props.title}>
        <PolicyList {...props} />
      </PermissionGate>
    </Flex>
  );
}

function PolicyList(props: PolicyTableProps) {
  const portal = useApi(portalApiRef);
  const { load: loadWith } = props;
  const load = useCallback((page: PageQuery) => loadWith(portal, page), [portal, loadWith]);
  const table = usePagedTable({ load, toItem: toRow });
  return (
    <PagedTable
      label={props.title}
      table={table}
      columns={props.columns}
      permission={props.permission.name}
      emptyState={<EmptyState title={`No ${props.title}`} />}
    />
  );
}

const listRoutes = (portal: PortalApi, page: PageQuery) => portal.listHttpRoutes(page);
const listPlans = (portal: PortalApi, page: PageQuery) => portal.listPlanPolicies(page);
const listAuth = (portal: PortalApi, page: PageQuery) => portal.listAuthPolicies(page);
const listRateLimits = (portal: PortalApi, page: PageQuery) => portal.listRateLimitPolicies(page);

/** The policies page. */
export function PoliciesPage() {
  const paths = usePortalPaths();
  const create = useDecision(portalApiProductCreatePermission);
  const routeColumns: ColumnConfig<PolicyRow>[] = [
    nameColumn,
    {
      id: 'hostnames',
      label: 'Hostnames',
      cell: ({ object }) => <TextCell title={(specOf(object).hostnames ?? []).join(', ') || '—'} />,
    },
    {
      id: 'parents',
      label: 'Gateways',
      cell: ({ object }) => (
        <TextCell
          title={
            (specOf(object).parentRefs ?? []).map((p: { name?: string }) => p.name).join(', ') ||
            '—'
          }
        />
      ),
    },
    ...(create.allowed
      ? [
          {
            id: 'create',
            label: 'Product',
            cell: ({ object }: PolicyRow) => (
              <Cell>
                <ButtonLink
                  size="small"
                  variant="secondary"
                  href={paths.newProduct({
                    namespace: object.metadata.namespace,
                    name: object.metadata.name,
                  })}
                  aria-label={`Create product from ${refText(object.metadata)}`}
                >
                  Create product
                </ButtonLink>
              </Cell>
            ),
          },
        ]
      : []),
  ];
  const planColumns: ColumnConfig<PolicyRow>[] = [
    nameColumn,
    targetColumn,
    {
      id: 'plans',
      label: 'Plans',
      cell: ({ object }) => (
        <TextCell
          title={
            (specOf(object).plans ?? [])
              .map(
                (p: { tier: string; limits?: Record<string, unknown> }) =>
                  `${p.tier} (${formatLimits(p.limits)})`,
              )
              .join('; ') || '—'
          }
        />
      ),
    },
  ];
  const rateLimitColumns: ColumnConfig<PolicyRow>[] = [
    nameColumn,
    targetColumn,
    {
      id: 'limits',
      label: 'Limits',
      cell: ({ object }) => (
        <TextCell title={Object.keys(specOf(object).limits ?? {}).join(', ') || '—'} />
      ),
    },
  ];
  return (
    <Flex direction="column" gap="6">
      <PolicyTable
        title="HTTPRoutes"
        permission={portalApiProductListPermission}
        load={listRoutes}
        columns={routeColumns}
      />
      <PolicyTable
        title="PlanPolicies"
        permission={portalPlanPolicyListPermission}
        load={listPlans}
        columns={planColumns}
      />
      <PolicyTable
        title="AuthPolicies"
        permission={portalAuthPolicyListPermission}
        load={listAuth}
        columns={[nameColumn, targetColumn]}
      />
      <PolicyTable
        title="RateLimitPolicies"
        permission={portalRateLimitPolicyListPermission}
        load={listRateLimits}
        columns={rateLimitColumns}
      />
    </Flex>
  );
}
