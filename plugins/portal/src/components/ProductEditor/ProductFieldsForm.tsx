/* The fields of an API product, shared by the create page and the edit dialog. */
import {
  Flex,
  Radio,
  RadioGroup,
  TextAreaField,
  TextField,
  type TextFieldProps,
} from '@backstage/ui';
import type { ProductFields } from './productFields';

/** The fields typed as one line of text. */
type TextKey = Exclude<keyof ProductFields, ChoiceKey | 'description'>;
/** The fields chosen from a few values. */
type ChoiceKey = 'approvalMode' | 'publishStatus';

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
  const input = (key: TextKey, label: string, more: Partial<TextFieldProps> = {}) => (
    <TextField label={label} value={fields[key]} onChange={set(key)} {...more} />
  );
  const choice = <K extends ChoiceKey>(
    key: K,
    label: string,
    options: [ProductFields[K], string][],
  ) => (
    <RadioGroup
      label={label}
      value={fields[key]}
      onChange={value => set(key)(value as ProductFields[K])}
    >
      {options.map(([value, text]) => (
        <Radio key={value} value={value}>
          {text}
        </Radio>
      ))}
    </RadioGroup>
  );
  return (
    <Flex direction="column" gap="3">
      {input('displayName', 'Display name', { isRequired: true, maxLength: 253 })}
      <TextAreaField label="Description" value={fields.description} onChange={set('description')} />
      <Flex gap="3">
        {input('version', 'Version')}
        {input('tags', 'Tags', { description: 'Comma-separated' })}
      </Flex>
      <Flex gap="3">
        {input('docsURL', 'Documentation URL', { type: 'url' })}
        {input('openAPISpecURL', 'OpenAPI document URL', { type: 'url' })}
      </Flex>
      <Flex gap="3">
        {input('contactEmail', 'Contact email', { type: 'email' })}
        {input('contactTeam', 'Contact team')}
        {input('contactUrl', 'Contact URL', { type: 'url' })}
      </Flex>
      {choice('approvalMode', 'Approval of key requests', [
        ['manual', 'An owner approves each request'],
        ['automatic', 'Approve every request automatically'],
      ])}
      {props.withPublishStatus &&
        choice('publishStatus', 'Publish status', [
          ['Draft', 'Draft (only owners see it)'],
          ['Published', 'Published (in the catalog for everyone)'],
        ])}
    </Flex>
  );
}
