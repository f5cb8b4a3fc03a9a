import { readPagedList } from './pagedList';

/** A backend's pages of `total` tools, `size` per page (`endless`: a next cursor for ever). */
function pages(total: number, size: number, endless = false) {
  const requested: Array<string | undefined> = [];
  const requestPage = async (cursor: string | undefined) => {
    requested.push(cursor);
    const page = cursor === undefined ? 0 : Number(cursor);
    const tools = Array.from({ length: size }, (_, i) => ({ name: `t${page * size + i}` })).filter(
      (_, i) => endless || page * size + i < total,
    );
    const more = endless || (page + 1) * size < total;
    return more ? { tools, nextCursor: String(page + 1) } : { tools };
  };
  return { requested, requestPage };
}

describe('readPagedList', () => {
  it('reads every page of a list within the bounds, in the backend’s order', async () => {
    const { requested, requestPage } = pages(25, 10);
    const list = await readPagedList('tools', requestPage, { maxItems: 100, maxPages: 5 });
    expect(list.items.map(t => t.name)).toEqual(Array.from({ length: 25 }, (_, i) => `t${i}`));
    expect(list.truncated).toBeUndefined();
    expect(requested).toEqual([undefined, '1', '2']);
  });

  it('keeps the first maxItems of a longer list and stops asking for pages', async () => {
    const { requested, requestPage } = pages(12_000, 500);
    const list = await readPagedList('tools', requestPage, { maxItems: 1000, maxPages: 50 });
    expect(list.items).toHaveLength(1000);
    expect(list.items[999]).toEqual({ name: 't999' });
    expect(list.truncated).toBe('items');
    expect(requested).toHaveLength(2);
  });

  it('cuts a single page larger than maxItems', async () => {
    const { requestPage } = pages(5000, 5000);
    const list = await readPagedList('tools', requestPage, { maxItems: 10, maxPages: 50 });
    expect(list.items.map(t => t.name)).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
    expect(list.truncated).toBe('items');
  });

  it('stops a cursor that never ends after maxPages pages', async () => {
    const { requested, requestPage } = pages(0, 3, true);
    const list = await readPagedList('tools', requestPage, { maxItems: 1000, maxPages: 4 });
    expect(requested).toHaveLength(4);
    expect(list.items).toHaveLength(12);
    expect(list.truncated).toBe('pages');
  });

  it('is not cut when the last page ends exactly at maxItems', async () => {
    const { requestPage } = pages(20, 10);
    const list = await readPagedList('tools', requestPage, { maxItems: 20, maxPages: 50 });
    expect(list.items).toHaveLength(20);
    expect(list.truncated).toBeUndefined();
  });

  it('keeps the shortest ttlMs of its pages and ignores items that are no objects', async () => {
    const answers = [
      { tools: [{ name: 'a' }, 'junk', null], ttlMs: 5000, nextCursor: 'x' },
      { tools: [{ name: 'b' }], ttlMs: 2000 },
    ];
    const list = await readPagedList('tools', async () => answers.shift()!, {
      maxItems: 10,
      maxPages: 10,
    });
    expect(list.items).toEqual([{ name: 'a' }, { name: 'b' }]);
    expect(list.ttlMs).toBe(2000);
  });
});
