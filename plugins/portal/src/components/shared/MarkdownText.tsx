/*
 * Text that others wrote in Markdown — MCP tool, prompt and resource descriptions, API product
 * descriptions — rendered as Markdown, safely: Backstage's MarkdownContent parses GitHub-flavoured
 * Markdown and passes raw HTML only through rehype-sanitize (GitHub's allow-list: no script, no
 * event handler attributes, no javascript: URLs), so a description cannot inject markup. The
 * whole text is shown, wrapping; nothing is cut.
 */
import { MarkdownContent } from '@backstage/core-components';
import { Box } from '@backstage/ui';

/** Props of {@link MarkdownText}. */
export interface MarkdownTextProps {
  /** The Markdown source (untrusted). */
  text: string;
}

/** Untrusted Markdown, rendered sanitized and wrapping. */
export function MarkdownText(props: MarkdownTextProps) {
  return (
    <Box style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
      <MarkdownContent content={props.text} dialect="gfm" />
    </Box>
  );
}
