/*
 * A table cell of text that wraps instead of being cut. @backstage/ui's CellText truncates with
 * an ellipsis and offers the rest only as a hover title, which keyboard and touch users never
 * see; the portal's cells (use cases, review reasons, dates, generated key names) must be
 * readable as they are, so they wrap — long unbroken words (key names, URLs) included.
 */
import { Cell, Flex, Link, Text } from '@backstage/ui';
import { MarkdownText } from './MarkdownText';

/** Props of {@link TextCell}: as CellText's title, description and link. */
export interface TextCellProps {
  title: string;
  description?: string;
  /** Makes the title a link. */
  href?: string;
  /** The description is Markdown written by others (rendered sanitized, see MarkdownText). */
  markdown?: boolean;
}

const wrapping = { overflowWrap: 'anywhere', whiteSpace: 'normal' } as const;

/** A table cell whose title and description wrap onto as many lines as they need. */
export function TextCell(props: TextCellProps) {
  return (
    <Cell>
      <Flex direction="column" gap="1" style={{ minWidth: 0 }}>
        {props.href === undefined ? (
          <Text as="p" variant="body-medium" style={wrapping}>
            {props.title}
          </Text>
        ) : (
          <Link href={props.href} variant="body-medium" style={wrapping}>
            {props.title}
          </Link>
        )}
        {props.description !== undefined &&
          props.description !== '' &&
          (props.markdown ? (
            <MarkdownText text={props.description} />
          ) : (
            <Text variant="body-medium" color="secondary" style={wrapping}>
              {props.description}
            </Text>
          ))}
      </Flex>
    </Cell>
  );
}
