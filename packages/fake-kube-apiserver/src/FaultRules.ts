/**
 * The fault rules of a fake server: which injected fault applies to a
 * request, each firing a bounded number of times.
 */
import { Fault, FaultHandle, KubeRequestInfo, RequestMatcher, matchesRequest } from './faults';

interface Rule {
  matcher: RequestMatcher;
  fault: Fault;
  remaining: number;
  hits: number;
}

/** Ordered fault rules; the first matching rule with hits left fires. */
export class FaultRules {
  private rules: Rule[] = [];

  add(matcher: RequestMatcher, fault: Fault, times: number): FaultHandle {
    const rule: Rule = { matcher, fault, remaining: times, hits: 0 };
    this.rules.push(rule);
    return {
      get hits() {
        return rule.hits;
      },
      remove: () => {
        this.rules = this.rules.filter(r => r !== rule);
      },
    };
  }

  /** The faults that apply to a request (a delay may combine with one other fault). */
  take(req: KubeRequestInfo): { delayMs: number; fault?: Fault } {
    let delayMs = 0;
    let fault: Fault | undefined;
    for (const rule of this.rules) {
      if (rule.remaining <= 0 || !matchesRequest(rule.matcher, req)) continue;
      if (rule.fault.type === 'delay') {
        if (delayMs > 0) continue;
        delayMs = rule.fault.ms;
      } else {
        if (fault) continue;
        fault = rule.fault;
      }
      rule.remaining--;
      rule.hits++;
    }
    this.rules = this.rules.filter(r => r.remaining > 0);
    return { delayMs, fault };
  }

  clear(): void {
    this.rules = [];
  }
}
