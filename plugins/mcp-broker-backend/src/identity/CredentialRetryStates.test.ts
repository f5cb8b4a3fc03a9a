/* The requestState of a credential's input_required answer: bound, unforgeable, expiring. */
import { randomBytes } from 'node:crypto';
import { fixedHmacKeys } from '../inputRequests/requestStateKey';
import { CredentialRetryStates, CredentialRetryStateError } from './CredentialRetryStates';

describe('CredentialRetryStates', () => {
  const key = randomBytes(32);
  let now = 1_000;
  const states = new CredentialRetryStates(fixedHmacKeys(key), 60_000, () => now);

  it('opens its own state for the same person and server, any number of times', () => {
    const state = states.seal('user:user:default/alice', 'github');
    expect(CredentialRetryStates.isCredentialState(state)).toBe(true);
    expect(CredentialRetryStates.isCredentialState('held-call-state')).toBe(false);
    expect(() => states.open(state, 'user:user:default/alice', 'github')).not.toThrow();
    expect(() => states.open(state, 'user:user:default/alice', 'github')).not.toThrow();
  });

  it('refuses a state of another person or server, an altered or foreign one, and an expired one', () => {
    const alice = 'user:user:default/alice';
    const state = states.seal(alice, 'github');
    expect(() => states.open(state, 'user:user:default/carol', 'github')).toThrow(
      new CredentialRetryStateError('requestState belongs to another caller or request'),
    );
    expect(() => states.open(state, alice, 'jira')).toThrow(/another caller/);
    const other = new CredentialRetryStates(fixedHmacKeys(randomBytes(32)), 60_000, () => now);
    expect(() => other.open(state, alice, 'github')).toThrow(/not issued/);
    expect(() => states.open(`${state}x`, alice, 'github')).toThrow(/not issued/);
    now += 60_000;
    expect(() => states.open(state, alice, 'github')).toThrow(CredentialRetryStateError);
    expect(() => states.open(state, alice, 'github')).toThrow(/expired/);
  });
});
