/* The fields of an API product, shared by the create page and the edit dialog. */
import { Flex, Radio, RadioGroup, TextAreaField, TextField } from '@backstage/ui';
import type { ProductFields } from './productFields';

/** Props of {@link ProductFieldsForm}. */
export interface ProductFieldsFormProps {
  fields: ProductFields;
  onChange: (fields: ProductFields) => void;
  /** Show the publish status choice (the create page; the detail page publishes with a button). */
  withPublishStatus?: boolean;
}

/** Inputs for every editable product field. */
export function ProductFieldsForm(props: ProductFieldsFormProps) {
  const { fields } = props;
  const set =
    <K extends keyof ProductFields>(key: K) =>
    (value: ProductFields[K]) =>
      props.onChange({ ...fields, [key]: value });
  return (
    <Flex direction="column" gap="3">
      <TextField
        label="Display name"
        isRequired
        value={fields.displayName}
        onChange={set('displayName')}
        maxLength={253}
      />
      <TextAreaField label="Description" value={fields.description} onChange={set('description')} />
      <Flex gap="3">
        <TextField label="Version" value={fields.version} onChange={set('version')} />
        <TextField
          label="Tags"
          description="Comma-separated"
          value={fields.tags}
          onChange={set('tags')}
        />
      </Flex>
      <Flex gap="3">
        <TextField
          label="Documentation URL"
          type="url"
          value={fields.docsURL}
          onChange={set('docsURL')}
        />
        <TextField
          label="OpenAPI document URL"
          type="url"
          value={fields.openAPISpecURL}
          onChange={set('openAPISpecURL')}
        />
      </Flex>
      <Flex gap="3">
        <TextField
          label="Contact email"
          type="email"
          value={fields.contactEmail}
          onChange={set('contactEmail')}
        />
        <TextField label="Contact team" value={fields.contactTeam} onChange={set('contactTeam')} />
        <TextField
          label="Contact URL"
          type="url"
          value={fields.contactUrl}
          onChange={set('contactUrl')}
        />
      </Flex>
      <RadioGroup
        label="Approval of key requests"
        value={fields.approvalMode}
        onChange={value => set('approvalMode')(value as ProductFields['approvalMode'])}
      >
        <Radio value="manual">An owner approves each request</Radio>
        <Radio value="automatic">Approve every request automatically</Radio>
      </RadioGroup>
      {props.withPublishStatus && (
        <RadioGroup
          label="Publish status"
          value={fields.publishStatus}
          onChange={value => set('publishStatus')(value as ProductFields['publishStatus'])}
        >
          <Radio value="Draft">Draft (only owners see it)</Radio>
          <Radio value="Published">Published (in the catalog for everyone)</Radio>
        </RadioGroup>
      )}
    </Flex>
  );
}
