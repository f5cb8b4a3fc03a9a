/*
 * Edit a product's fields: a JSON merge patch of what changed, with the product's
 * resourceVersion as a precondition, so an edit made elsewhere meanwhile is refused (409) and
 * said so instead of being overwritten. An MCP product's plans are edited with the plan editor of
 * product creation; changed, they replace the whole list (`spec.plans`, contract mcp-access §3.2).
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { Dialog, DialogBody, DialogHeader, Flex, Text } from '@backstage/ui';
import { isMcpTarget, type ApiProduct, type McpTarget } from '@devportal/plugin-portal-common';
import { useState } from 'react';
import { useMcpServerEntity } from '../../hooks/useMcpServerEntity';
import { mcpPlansOf } from '../McpProduct/mcpPlans';
import { portalApiRef } from '../../apis/PortalApi';
import { DialogActions } from '../shared/DialogActions';
import { ErrorAlert } from '../shared/ErrorAlert';
import { statusOf } from '../shared/errors';
import { draftsOf, planDraftsProblem, plansOf, type PlanDraft } from './mcpPlanDrafts';
import { PlanEditor } from './PlanEditor';
import { ProductFieldsForm } from './ProductFieldsForm';
import { fieldsOf, patchBody, type ProductFields } from './productFields';

/** Props of {@link EditProductDialog}. */
export interface EditProductDialogProps {
  product: ApiProduct;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  onSaved: (product: ApiProduct) => void;
}

/** The edit dialog (mounted while open, with the product's current fields). */
export function EditProductDialog(props: EditProductDialogProps) {
  const portal = useApi(portalApiRef);
  const [fields, setFields] = useState<ProductFields>(() => fieldsOf(props.product));
  const { targetRef } = props.product.spec;
  const target = isMcpTarget(targetRef) ? targetRef : undefined;
  const [plans, setPlans] = useState<PlanDraft[]>(() => draftsOf(mcpPlansOf(props.product)));
  const plansProblem = target === undefined ? undefined : planDraftsProblem(plans);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>();

  /** The patch: the fields that changed, and the plans when they did. */
  const body = () => {
    const patch = patchBody(props.product, fields);
    if (target === undefined) return patch;
    const next = plansOf(plans);
    // Both sides through the drafts, so that only a real change counts.
    const before = plansOf(draftsOf(mcpPlansOf(props.product)));
    return JSON.stringify(next) === JSON.stringify(before)
      ? patch
      : { ...patch, spec: { ...patch.spec, plans: next } };
  };

  const save = async () => {
    setSaving(true);
    setError(undefined);
    try {
      const saved = await portal.updateApiProduct(props.product.metadata, body());
      props.onSaved(saved);
    } catch (e) {
      setError(e);
      setSaving(false);
    }
  };

  return (
    <Dialog isOpen={props.isOpen} onOpenChange={props.onOpenChange} width={720}>
      <DialogHeader>Edit {props.product.spec.displayName}</DialogHeader>
      <DialogBody>
        <Flex direction="column" gap="4">
          <ProductFieldsForm fields={fields} onChange={setFields} />
          {target !== undefined && (
            <EditablePlans
              target={target}
              plans={plans}
              onChange={setPlans}
              problem={plansProblem}
            />
          )}
          <ErrorAlert
            title={
              statusOf(error) === 409
                ? 'Someone changed this product meanwhile; reload it and edit again'
                : 'The changes were not saved'
            }
            error={error}
          />
        </Flex>
      </DialogBody>
      <DialogActions
        onCancel={() => props.onOpenChange(false)}
        actionLabel="Save"
        onAction={save}
        isPending={saving}
        isDisabled={fields.displayName.trim() === '' || plansProblem !== undefined}
      />
    </Dialog>
  );
}

/** An MCP product's plans in the plan editor, with the server's tool names suggested. */
function EditablePlans(props: {
  target: McpTarget;
  plans: PlanDraft[];
  onChange: (plans: PlanDraft[]) => void;
  problem?: string;
}) {
  const entity = useMcpServerEntity(props.target);
  return (
    <Flex direction="column" gap="2">
      <PlanEditor
        plans={props.plans}
        onChange={props.onChange}
        toolNames={entity.value?.offer.tools.map(tool => tool.name) ?? []}
      />
      {props.problem !== undefined && (
        <Text color="danger" role="alert">
          {props.problem}
        </Text>
      )}
    </Flex>
  );
}
