/**
 * The resource types a fake server serves, looked up the ways its HTTP layer
 * and storage need (path segments, apiVersion + kind, group/resource).
 */
import { ResourceType, apiVersionOf } from './resources';

/** Looks resource types up by path segment or by apiVersion + kind. */
export class ResourceRegistry {
  private readonly byPath = new Map<string, ResourceType>();

  register(rt: ResourceType): void {
    this.byPath.set(`${rt.group}/${rt.version}/${rt.plural}`, rt);
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  findByKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.all().find(rt => apiVersionOf(rt) === apiVersion && rt.kind === kind);
  }

  /** Every version of the same group/resource (they share storage). */
  findByGroupResource(group: string, plural: string): ResourceType[] {
    return this.all().filter(rt => rt.group === group && rt.plural === plural);
  }

  all(): ResourceType[] {
    return [...this.byPath.values()];
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.all().some(rt => rt.group === group && rt.version === version);
  }
}
