import { mapDatabaseError } from './databaseErrors';

function driverError(code: string, extra: Record<string, unknown> = {}) {
  return Object.assign(new Error(`insert into "t" values ($1) - ${code}`), {
    code,
    ...extra,
  });
}

describe('mapDatabaseError', () => {
  it.each([
    ['23505', 'ConflictError'],
    ['SQLITE_CONSTRAINT_PRIMARYKEY', 'ConflictError'],
    ['SQLITE_CONSTRAINT_UNIQUE', 'ConflictError'],
    ['23503', 'NotFoundError'],
    ['SQLITE_CONSTRAINT_FOREIGNKEY', 'NotFoundError'],
    ['22001', 'InputError'],
    ['22003', 'InputError'],
    ['ECONNREFUSED', 'ServiceUnavailableError'],
    ['08006', 'ServiceUnavailableError'],
    ['57014', 'ServiceUnavailableError'],
    ['40P01', 'ServiceUnavailableError'],
    ['SQLITE_BUSY', 'ServiceUnavailableError'],
  ])('maps driver code %s to %s', (code, name) => {
    expect(mapDatabaseError(driverError(code))).toMatchObject({ name });
  });

  it("uses the caller's messages and never the driver's", () => {
    const conflict = mapDatabaseError(driverError('23505'), {
      conflict: 'API product a/b already exists',
    }) as Error;
    expect(conflict.message).toBe('API product a/b already exists');
    const missing = mapDatabaseError(driverError('23503'), {
      missingReference: 'API product a/b not found',
    }) as Error;
    expect(missing.message).toBe('API product a/b not found');
  });

  it('returns unknown errors as they are, without the row values PostgreSQL quotes', () => {
    const error = driverError('23502', {
      detail: 'Failing row contains (ns, key, s3cr3t-value).',
    });
    const mapped = mapDatabaseError(error) as Error & { detail?: string };
    expect(mapped).toBe(error);
    expect(mapped.message).toContain('23502');
    expect(mapped.detail).toBeUndefined();
    expect(mapDatabaseError('not an error')).toBe('not an error');
  });
});
