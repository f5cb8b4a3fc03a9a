import { ClientGoneFlag } from './ClientGone';

describe('ClientGoneFlag', () => {
  it('tells only the current watcher, once', () => {
    const flag = new ClientGoneFlag();
    const replaced = jest.fn();
    const current = jest.fn();
    flag.watch(replaced);
    flag.watch(current);
    flag.markGone();
    flag.markGone();
    expect(flag.gone).toBe(true);
    expect(replaced).not.toHaveBeenCalled();
    expect(current).toHaveBeenCalledTimes(1);
  });

  it('tells nobody after watching stopped', () => {
    const flag = new ClientGoneFlag();
    const watcher = jest.fn();
    flag.watch(watcher);
    flag.watch(undefined);
    flag.markGone();
    expect(watcher).not.toHaveBeenCalled();
  });
});
