/*
 * A URL pattern of a credential profile (`mcpBroker.credentialProfiles.<name>.urls`): which
 * server URLs a registration using the profile may name. Written as a URL with globs:
 *   https://*.tools.example.com/mcp      one host label (`[a-z0-9-]+`), exact path
 *   https://search.example.com/mcp/*     one path segment (no `/`)
 *   https://search.example.com/**        any path
 * Matching compares the scheme, host and port (`*` only inside the host, never across a `.`),
 * then the path; a URL's query is ignored, a URL with user information never matches (nothing
 * of the registrant's may ride along in the URL). Default ports are normalised on both sides, so
 * `https://h:443/x` and `https://h/x` are the same pattern.
 */

/** Thrown for a pattern that is not one; the message names the key. */
export class UrlPatternError extends Error {
  readonly name = 'UrlPatternError';
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };
const SHAPE = /^(https?):\/\/([^/?#@]+)(\/[^?#]*)$/i;
const HOST = /^[a-z0-9.*-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/;

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/** A parsed URL pattern; see the file comment. */
export class UrlPattern {
  private constructor(
    /** The pattern as written (for messages). */
    readonly source: string,
    private readonly origin: RegExp,
    private readonly path: RegExp,
  ) {}

  /** Parses `pattern`; `at` is its config key, named in the error of an invalid one. */
  static parse(pattern: string, at: string): UrlPattern {
    const shape = SHAPE.exec(pattern);
    if (!shape) {
      throw new UrlPatternError(
        `Invalid ${at} "${pattern}": write an http(s) URL with a path and without query or user information, e.g. https://*.tools.example.com/mcp or https://search.example.com/**`,
      );
    }
    const scheme = `${shape[1].toLowerCase()}:`;
    let host = shape[2].toLowerCase();
    if (!HOST.test(host) || host.includes('**')) {
      throw new UrlPatternError(
        `Invalid ${at} "${pattern}": the host may use letters, digits, ".", "-" and "*" (one label) only`,
      );
    }
    if (host.endsWith(`:${DEFAULT_PORTS[scheme]}`)) host = host.slice(0, host.lastIndexOf(':'));
    const hostRegExp = escapeRegExp(host).replace(/\*/g, '[a-z0-9-]+');
    const pathRegExp = shape[3]
      .split('**')
      .map(part => escapeRegExp(part).replace(/\*/g, '[^/]*'))
      .join('.*');
    return new UrlPattern(
      pattern,
      new RegExp(`^${escapeRegExp(scheme)}//${hostRegExp}$`),
      new RegExp(`^${pathRegExp}$`),
    );
  }

  /** True when `url` matches (see the file comment). */
  matches(url: URL): boolean {
    if (url.username !== '' || url.password !== '') return false;
    // URL.host already omits a default port and lower-cases the name.
    return this.origin.test(`${url.protocol}//${url.host}`) && this.path.test(url.pathname);
  }
}
