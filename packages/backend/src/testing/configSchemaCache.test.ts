/*
 * The config schema preload of test backends (configSchemaCache.cjs): the first load of a source
 * state compiles the schema and keeps it, later loads read what was kept, and what they read
 * builds the same schema as a fresh compile.
 */
import fs from 'node:fs';
import path from 'node:path';

// The config-loader the preload patches: the one backend-defaults resolves.
const configLoader = require(
  require.resolve('@backstage/config-loader', {
    paths: [path.dirname(require.resolve('@backstage/backend-defaults/package.json'))],
  }),
);
const compile = configLoader.loadConfigSchema;
const { cacheFile } = require('./configSchemaCache.cjs') as {
  cacheFile(dependencies: string[]): string;
};

/** A plugin of this workspace with a TypeScript schema (config.d.ts). */
const DEPENDENCIES = ['@devportal/plugin-portal-backend'];

/**
 * The schemas of a serialized config schema in path order: config-loader collects the packages'
 * schemas concurrently, so two fresh compiles list them in different orders.
 */
function byPath(serialized: { schemas: Array<{ path: string }> }) {
  return [...serialized.schemas].sort((a, b) => a.path.localeCompare(b.path));
}

jest.setTimeout(60_000);

describe('configSchemaCache', () => {
  beforeEach(() => fs.rmSync(cacheFile(DEPENDENCIES), { force: true }));
  afterAll(() => fs.rmSync(cacheFile(DEPENDENCIES), { force: true }));

  it('keeps the compiled schema, and builds the same schema from it as a fresh compile', async () => {
    const fresh = (await compile({ dependencies: DEPENDENCIES })).serialize();
    expect(fresh.schemas.map((s: { packageName: string }) => s.packageName)).toContain(
      '@devportal/plugin-portal-backend',
    );

    const first = await configLoader.loadConfigSchema({ dependencies: DEPENDENCIES });
    expect(byPath(first.serialize())).toEqual(byPath(fresh));
    expect(byPath(JSON.parse(fs.readFileSync(cacheFile(DEPENDENCIES), 'utf8')))).toEqual(
      byPath(fresh),
    );

    const second = await configLoader.loadConfigSchema({ dependencies: DEPENDENCIES });
    expect(byPath(second.serialize())).toEqual(byPath(fresh));
  });

  it('reads a later load from the kept file, not from the sources', async () => {
    await configLoader.loadConfigSchema({ dependencies: DEPENDENCIES });
    const kept = JSON.parse(fs.readFileSync(cacheFile(DEPENDENCIES), 'utf8'));
    const marked = {
      ...kept,
      schemas: [...kept.schemas, { path: 'marker', value: { type: 'object' } }],
    };
    fs.writeFileSync(cacheFile(DEPENDENCIES), JSON.stringify(marked));
    const loaded = await configLoader.loadConfigSchema({ dependencies: DEPENDENCIES });
    expect(loaded.serialize()).toEqual(marked);
  });

  it('keys the file by the packages asked for', () => {
    expect(cacheFile(DEPENDENCIES)).not.toBe(cacheFile([...DEPENDENCIES, 'backend']));
    expect(cacheFile(DEPENDENCIES)).toBe(cacheFile([...DEPENDENCIES]));
  });
});
