import { Cell } from '@backstage/ui';
import { createElement } from 'react';
import { headerMinWidth, readableColumns } from './readableColumns';

const cell = () => createElement(Cell);

describe('readableColumns', () => {
  it('gives a column without a width the room its header label needs', () => {
    const [requested] = readableColumns([{ id: 'dates', label: 'Requested', cell }]);
    expect(requested.minWidth).toBe(headerMinWidth('Requested'));
    expect(headerMinWidth('Requested')).toBeGreaterThan(headerMinWidth('Plan'));
  });

  it('sizes a label of several words by its longest word (the label wraps between words)', () => {
    expect(headerMinWidth('Requested by')).toBe(headerMinWidth('Requested'));
    expect(headerMinWidth('Requested by')).toBeLessThan(headerMinWidth('Requestedby'));
  });

  it("keeps a column's own minimum or fixed width", () => {
    const columns = readableColumns([
      { id: 'actions', label: 'Actions', minWidth: 150, cell },
      { id: 'fixed', label: 'A long header label', width: 80, cell },
    ]);
    expect(columns.map(column => column.minWidth)).toEqual([150, undefined]);
  });
});
