/*
 * `/portal/products/new`: an API product made from one of two sources — an HTTPRoute of the
 * listing (its namespace is the product's), owned by the person or one of their groups; or an MCP
 * server or endpoint from the catalog (contract mcp-access §8), with a chosen namespace, the
 * server's owner and plans of tool-call quotas — named as a DNS-1123 label. The routes are read a
 * page at a time; the server checks everything again (the route or server exists, the name is
 * free, the owner is one of the caller's refs, the caller owns the server).
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  Button,
  Card,
  CardBody,
  Flex,
  Radio,
  RadioGroup,
  Select,
  Text,
  TextField,
} from '@backstage/ui';
import {
  portalApiProductCreatePermission,
  portalApiProductUpdateAllPermission,
  type ObjectRef,
  type ReadOnlyObject,
} from '@devportal/plugin-portal-common';
import { useEffect, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { portalApiRef } from '../../apis/PortalApi';
import { useOwnership } from '../../hooks/useOwnership';
import { useDecision } from '../../hooks/usePermissions';
import { ErrorAlert } from '../shared/ErrorAlert';
import { refText } from '../shared/format';
import { ErrorState, ForbiddenState, LoadingState } from '../shared/StateViews';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { ProductFieldsForm } from './ProductFieldsForm';
import {
  createBody,
  EMPTY_PRODUCT_FIELDS,
  mcpCreateBody,
  nameProblem,
  type ProductFields,
} from './productFields';
import { McpSourceFields, type McpSourceDraft } from './McpSourceFields';
import { newPlan, planDraftsProblem, plansOf } from './mcpPlanDrafts';

/** Where a new product's target comes from. */
type Source = 'route' | 'mcp';

/** HTTPRoutes per page of the route choice. */
const ROUTES_PER_PAGE = 50;

/** The HTTPRoutes of the listing, a page at a time. */
function useRoutePages() {
  const portal = useApi(portalApiRef);
  const [routes, setRoutes] = useState<ReadOnlyObject[]>([]);
  const [next, setNext] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>();
  const loadPage = async (token: string | undefined) => {
    setLoading(true);
    try {
      const page = await portal.listHttpRoutes({ limit: ROUTES_PER_PAGE, continue: token });
      setRoutes(previous => (token === undefined ? page.items : [...previous, ...page.items]));
      setNext(page.metadata?.continue);
      setError(undefined);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    loadPage(undefined);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [portal]);
  return { routes, loading, error, more: next === undefined ? undefined : () => loadPage(next) };
}

/** The create product page. */
export function CreateProductPage() {
  const portal = useApi(portalApiRef);
  const paths = usePortalPaths();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const create = useDecision(portalApiProductCreatePermission);
  const updateAll = useDecision(portalApiProductUpdateAllPermission);
  const ownership = useOwnership();
  const routePages = useRoutePages();
  const [source, setSource] = useState<Source>(params.get('server') === null ? 'route' : 'mcp');
  const [mcpDraft, setMcpDraft] = useState<McpSourceDraft>(() => ({
    target: params.get('server') === null ? undefined : `MCPServer/${params.get('server')}`,
    namespace: '',
    plans: [newPlan('bronze')],
  }));
  const preselected =
    params.get('namespace') !== null && params.get('route') !== null
      ? `${params.get('namespace')}/${params.get('route')}`
      : undefined;
  const [route, setRoute] = useState<string | undefined>(preselected);
  const [name, setName] = useState('');
  const [owner, setOwner] = useState<string>();
  const [fields, setFields] = useState<ProductFields>(EMPTY_PRODUCT_FIELDS);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>();
  const [touchedName, setTouchedName] = useState(false);

  if (create.loading) return <LoadingState what="permissions" />;
  if (!create.allowed) {
    return (
      <ForbiddenState what="product creation" permission={portalApiProductCreatePermission.name} />
    );
  }
  const chosenOwner = owner ?? ownership?.userRef;
  const problem = nameProblem(name);
  const routeRef: ObjectRef | undefined =
    route === undefined
      ? undefined
      : { namespace: route.split('/')[0], name: route.split('/').slice(1).join('/') };
  const server = mcpDraft.server;
  const mcpReady =
    server !== undefined &&
    nameProblem(mcpDraft.namespace) === undefined &&
    planDraftsProblem(mcpDraft.plans) === undefined;
  const ready =
    (source === 'route' ? routeRef !== undefined : mcpReady) &&
    problem === undefined &&
    fields.displayName.trim() !== '';

  const bodyToSend = () => {
    if (source === 'mcp') {
      return server === undefined
        ? undefined
        : mcpCreateBody(fields, mcpDraft.namespace, name, server.target, plansOf(mcpDraft.plans));
    }
    return routeRef === undefined
      ? undefined
      : createBody(
          fields,
          routeRef,
          name,
          chosenOwner === ownership?.userRef ? undefined : chosenOwner,
        );
  };

  const save = async () => {
    const body = bodyToSend();
    if (body === undefined) return;
    setSaving(true);
    setError(undefined);
    try {
      const product = await portal.createApiProduct(body);
      navigate(paths.product(product.metadata));
    } catch (e) {
      setError(e);
      setSaving(false);
    }
  };

  const routeOptions = routePages.routes.map(r => ({
    id: refText(r.metadata),
    label: refText(r.metadata),
  }));
  if (preselected !== undefined && !routeOptions.some(o => o.id === preselected)) {
    routeOptions.unshift({ id: preselected, label: preselected });
  }

  return (
    <Card>
      <CardBody>
        <Flex direction="column" gap="4">
          <Text as="h2" variant="title-small" weight="bold">
            Create an API product
          </Text>
          <RadioGroup label="Source" value={source} onChange={value => setSource(value as Source)}>
            <Radio value="route">An HTTPRoute (API keys)</Radio>
            <Radio value="mcp">
              An MCP server or endpoint (access with one&apos;s own sign-in)
            </Radio>
          </RadioGroup>
          {source === 'mcp' ? (
            <McpSourceFields
              offerable={choice =>
                updateAll.allowed ||
                (choice.owner !== undefined && ownership?.refs.has(choice.owner) === true)
              }
              draft={mcpDraft}
              onChange={setMcpDraft}
            />
          ) : (
            <>
              {routePages.error !== undefined && (
                <ErrorState title="Could not load the HTTPRoutes" error={routePages.error} />
              )}
              <Flex gap="3" align="end">
                <Select
                  label="HTTPRoute"
                  description="The product exposes this route; its namespace is the product's."
                  isRequired
                  options={routeOptions}
                  value={route ?? null}
                  onChange={key => setRoute(key === null ? undefined : String(key))}
                  placeholder={routePages.loading ? 'Loading routes…' : 'Choose a route'}
                />
                {routePages.more && (
                  <Button
                    variant="secondary"
                    onPress={routePages.more}
                    isPending={routePages.loading}
                  >
                    Load more routes
                  </Button>
                )}
              </Flex>
            </>
          )}
          <TextField
            label="Name"
            description="The product's name in its namespace: a DNS-1123 label"
            isRequired
            value={name}
            onChange={value => {
              setName(value);
              setTouchedName(true);
            }}
            validate={value => (touchedName ? (nameProblem(value) ?? null) : null)}
            validationBehavior="aria"
          />
          {source === 'route' && ownership !== undefined && (
            <Select
              label="Owner"
              description="Who may edit and delete it and approve its key requests"
              options={[...ownership.refs].map(ref => ({ id: ref, label: ref }))}
              value={chosenOwner ?? null}
              onChange={key => setOwner(key === null ? undefined : String(key))}
            />
          )}
          <ProductFieldsForm fields={fields} onChange={setFields} withPublishStatus />
          <ErrorAlert title="The product was not created" error={error} />
          <Flex gap="2">
            <Button variant="primary" onPress={save} isPending={saving} isDisabled={!ready}>
              Create product
            </Button>
            <Button variant="secondary" onPress={() => navigate(paths.catalog)}>
              Cancel
            </Button>
          </Flex>
        </Flex>
      </CardBody>
    </Card>
  );
}
