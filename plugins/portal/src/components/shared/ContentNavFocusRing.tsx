/*
 * A visible focus ring on the header's tabs. @backstage/ui's Header takes the ring off its tab
 * links (`outline: none`) and draws focus on a separate indicator that follows the pointer's
 * highlight; a tab reached with Tab showed no ring at all. This rule gives the focused tab link
 * the ring @backstage/ui draws on its other controls. It is unlayered, so it wins over the
 * library's `@layer components` rules.
 */

const RULE =
  'nav[aria-label="Content navigation"] a:focus-visible ' +
  '{ outline: 2px solid var(--bui-ring); outline-offset: -2px; border-radius: 4px; }';

/** Renders the focus ring rule for the header tabs of the page it is on. */
export function ContentNavFocusRing() {
  return <style>{RULE}</style>;
}
