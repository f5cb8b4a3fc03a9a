/*
 * The `/status` count of a backend's UI resources (docs/contracts/tasks-and-apps.md §5): listed
 * `ui://` resources and those its tools link to, each once; other resources and templates not.
 */
import { uiResourceCount } from './uiResourceCount';

describe('uiResourceCount', () => {
  it('counts each ui:// URI once, listed or only linked by a tool, and nothing else', () => {
    expect(
      uiResourceCount({
        resources: [
          { uri: 'ui://board/view.html' },
          { uri: 'ui://board/settings.html' },
          { uri: 'file:///readme.md' },
        ],
        tools: [
          { name: 'show', _meta: { ui: { resourceUri: 'ui://board/view.html' } } },
          { name: 'chart', _meta: { 'ui/resourceUri': 'ui://board/chart.html' } },
          { name: 'plain' },
        ],
      }),
    ).toBe(3);
    expect(uiResourceCount({ resources: [{ uri: 'https://x/y' }], tools: [{ name: 'a' }] })).toBe(
      0,
    );
  });
});
