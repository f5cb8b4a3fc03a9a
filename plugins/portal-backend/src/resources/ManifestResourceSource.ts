/*
 * ManifestResourceSource: the read-only kinds (HTTPRoute, PlanPolicy, AuthPolicy,
 * RateLimitPolicy) from Kubernetes manifest files, for the database store where there is
 * no cluster to ask.
 *
 * The files are read and validated once, at start-up: any problem (missing file, YAML
 * syntax, a kind that is not one of the four, a wrong apiVersion, a missing namespace,
 * a malformed PlanPolicy, the same object twice) fails start-up with a message naming
 * the file and the document, because serving half a fixture silently is worse than not
 * starting. Unknown kinds are refused rather than skipped so that a typo ("HttpRoute")
 * cannot make an object vanish. The objects are then served from memory; callers get
 * copies, so nothing they do changes what the next caller sees.
 */
import { readFile } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import yaml from 'js-yaml';
import type { ObjectRef, ReadOnlyObject } from '@devportal/plugin-portal-common';
import { pageInMemory } from '../store/keysetCursor';
import type { Page, PageRequest, ReadOnlyKind, ReadOnlyResourceSource } from '../store/types';
import {
  READ_ONLY_API_VERSIONS,
  describeZodError,
  isReadOnlyKind,
  manifestSchema,
} from './manifestSchema';

/** A manifest's text and the name to use for it in error messages. */
export interface ManifestText {
  /** The file name (as configured) or any label that tells the reader where it is. */
  source: string;
  text: string;
}

function keyOf(kind: string, ref: ObjectRef): string {
  return `${kind}\u0000${ref.namespace}\u0000${ref.name}`;
}

function compareRefs(a: ReadOnlyObject, b: ReadOnlyObject): number {
  return (
    a.metadata.namespace.localeCompare(b.metadata.namespace) ||
    a.metadata.name.localeCompare(b.metadata.name)
  );
}

/** Parses and validates one manifest; throws an Error naming source and document. */
function parseManifest(manifest: ManifestText): Array<{
  object: ReadOnlyObject;
  where: string;
}> {
  let documents: unknown[];
  try {
    documents = yaml.loadAll(manifest.text);
  } catch (error) {
    throw new Error(
      `Portal manifest ${manifest.source} is not valid YAML: ${(error as Error).message}`,
    );
  }
  const parsed: Array<{ object: ReadOnlyObject; where: string }> = [];
  documents.forEach((document, index) => {
    let where = `${manifest.source}, document ${index + 1}`;
    // `---` with nothing after it (or only comments) is an empty document, not an error.
    if (document === null || document === undefined) {
      return;
    }
    if (typeof document !== 'object' || Array.isArray(document)) {
      throw new Error(`Portal manifest ${where} is not a Kubernetes object (a YAML mapping)`);
    }
    const { kind, metadata } = document as {
      kind?: unknown;
      metadata?: { namespace?: unknown; name?: unknown };
    };
    if (metadata && typeof metadata === 'object') {
      where += ` (${String(kind)} ${String(metadata.namespace)}/${String(metadata.name)})`;
    }
    if (!isReadOnlyKind(kind)) {
      throw new Error(
        `Portal manifest ${where}: kind ${JSON.stringify(kind)} is not one of ${Object.keys(
          READ_ONLY_API_VERSIONS,
        ).join(', ')}`,
      );
    }
    const result = manifestSchema(kind).safeParse(document);
    if (!result.success) {
      throw new Error(`Portal manifest ${where} is invalid: ${describeZodError(result.error)}`);
    }
    parsed.push({ object: result.data as ReadOnlyObject, where });
  });
  return parsed;
}

/**
 * A {@link ReadOnlyResourceSource} over Kubernetes manifest YAML files (config
 * `portal.manifests`), loaded and validated once.
 */
export class ManifestResourceSource implements ReadOnlyResourceSource {
  /**
   * Reads the given files (relative paths against the working directory, which is the
   * backend's, as for every path in Backstage config). Rejects with an Error naming the
   * file and document when one is missing or invalid.
   */
  static async fromFiles(files: string[]): Promise<ManifestResourceSource> {
    const manifests = await Promise.all(
      files.map(async file => {
        try {
          return { source: file, text: await readFile(resolvePath(file), 'utf8') };
        } catch (error) {
          throw new Error(
            `Portal manifest ${file} cannot be read (resolved to ${resolvePath(file)}): ${
              (error as Error).message
            }`,
          );
        }
      }),
    );
    return ManifestResourceSource.fromManifests(manifests);
  }

  /** Builds a source from manifest texts already in memory (tests, embedded fixtures). */
  static fromManifests(manifests: ManifestText[]): ManifestResourceSource {
    const objects = new Map<string, ReadOnlyObject>();
    const origins = new Map<string, string>();
    for (const manifest of manifests) {
      for (const { object, where } of parseManifest(manifest)) {
        const key = keyOf(object.kind, object.metadata);
        const earlier = origins.get(key);
        if (earlier !== undefined) {
          throw new Error(`Portal manifest ${where} defines the same object as ${earlier}`);
        }
        objects.set(key, object);
        origins.set(key, where);
      }
    }
    return new ManifestResourceSource(objects);
  }

  private readonly byKind = new Map<ReadOnlyKind, ReadOnlyObject[]>();

  private constructor(private readonly objects: Map<string, ReadOnlyObject>) {
    for (const object of objects.values()) {
      const kind = object.kind as ReadOnlyKind;
      const list = this.byKind.get(kind) ?? [];
      list.push(object);
      this.byKind.set(kind, list);
    }
    for (const list of this.byKind.values()) {
      list.sort(compareRefs);
    }
  }

  /** Objects of one kind, optionally in one namespace, ordered by namespace and name. */
  async list(kind: ReadOnlyKind, options?: { namespace?: string }): Promise<ReadOnlyObject[]> {
    const namespace = options?.namespace;
    return (this.byKind.get(kind) ?? [])
      .filter(o => namespace === undefined || o.metadata.namespace === namespace)
      .map(o => structuredClone(o));
  }

  /**
   * One page of {@link ManifestResourceSource.list}, in the database store's page order
   * (creation time, namespace, name; a manifest without creationTimestamp sorts first).
   */
  async listPage(
    kind: ReadOnlyKind,
    options: { namespace?: string },
    page: PageRequest,
  ): Promise<Page<ReadOnlyObject>> {
    return pageInMemory(
      await this.list(kind, options),
      object => ({
        createdAt: object.metadata.creationTimestamp ?? '',
        namespace: object.metadata.namespace,
        name: object.metadata.name,
      }),
      page,
    );
  }

  /** One object, or undefined when there is none of that kind, namespace and name. */
  async get(kind: ReadOnlyKind, ref: ObjectRef): Promise<ReadOnlyObject | undefined> {
    const object = this.objects.get(keyOf(kind, ref));
    return object === undefined ? undefined : structuredClone(object);
  }
}
