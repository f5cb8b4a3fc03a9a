/*
 * The portal's corrections to @backstage/ui's look, where the library falls short of what a
 * person needs to see. The rules are unlayered, so they win over the library's
 * `@layer components` rules; every portal page renders them (a page can be opened on its own).
 *
 * - Header tabs: @backstage/ui's Header takes the ring off its tab links (`outline: none`) and
 *   draws focus on a separate indicator that follows the pointer's highlight; a tab reached with
 *   Tab showed no ring at all. The focused tab link gets the ring the library draws on its other
 *   controls.
 * - Focus in lists and tables: a select's option reached with the arrows is marked only by a
 *   background (#f7f7f7 on white, 1.07:1, which nobody sees), and a table row or cell reached
 *   with the arrows by the browser's thin default outline. Both get the library's ring.
 * - Table header labels: the library cuts a label that does not fit its column with an
 *   ellipsis; in a narrow window "Requested by" became "Request…". A label wraps between its
 *   words instead (readableColumns gives each column room for the longest word).
 * - Hovered table rows: a row under the pointer gets a darker background
 *   (`--bui-bg-neutral-*-hover`), and the secondary text in it (descriptions, dates) fell to
 *   4.39:1 on the app's background in the light theme (WCAG AA asks 4.5:1). In a hovered row the
 *   secondary colour is darker (lighter in the dark theme) by as much as that background is.
 * - Secondary text on cards in the dark theme: the library's dark secondary colour (#a3a3a3)
 *   meets 4.5:1 only on the app's background (#333333, 5.0:1); on a card it fell to 4.03:1
 *   (neutral-1, #424141), 3.24:1 (neutral-2, #504f4f: a product's plans, the MCP tools cards)
 *   and 2.65:1 (neutral-3). On those surfaces it is lighter, still short of the primary white.
 */

/** The secondary text colour in a hovered row: 5:1 or more on every light row background. */
const HOVERED_SECONDARY_LIGHT = '#5c5c5c';
/** The same for the dark theme, on the app's background and on a card. */
const HOVERED_SECONDARY_DARK = '#d4d4d4';
/** Dark theme secondary text on neutral-1 and neutral-2 cards: 6.3:1 and 5.1:1. */
const CARD_SECONDARY_DARK = '#cccccc';
/** Dark theme secondary text on a neutral-3 surface (a card in a card in a card): 4.8:1. */
const NESTED_CARD_SECONDARY_DARK = '#dadada';

const RULES = [
  'nav[aria-label="Content navigation"] a:focus-visible ' +
    '{ outline: 2px solid var(--bui-ring); outline-offset: -2px; border-radius: 4px; }',
  '.bui-SelectItem[data-focus-visible], .bui-TableRow[data-focus-visible], ' +
    '.bui-TableCell[data-focus-visible] ' +
    '{ outline: 2px solid var(--bui-ring); outline-offset: -2px; }',
  '.bui-TableHeadLabel { white-space: normal; }',
  `.bui-TableRow:hover { --bui-fg-secondary: ${HOVERED_SECONDARY_LIGHT}; }`,
  `[data-theme-mode='dark'] :is([data-bg='neutral-1'], [data-bg='neutral-2']) ` +
    `{ --bui-fg-secondary: ${CARD_SECONDARY_DARK}; }`,
  `[data-theme-mode='dark'] [data-bg='neutral-3'] { --bui-fg-secondary: ${NESTED_CARD_SECONDARY_DARK}; }`,
  `[data-theme-mode='dark'] .bui-TableRow:hover { --bui-fg-secondary: ${HOVERED_SECONDARY_DARK}; }`,
].join('\n');

/** Renders the portal's style corrections (see the file's comment) for the page it is on. */
export function PortalStyles() {
  return <style>{RULES}</style>;
}
