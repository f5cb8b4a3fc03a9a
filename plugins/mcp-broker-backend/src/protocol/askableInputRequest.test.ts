import { isAskableInputRequest } from './askableInputRequest';

describe('isAskableInputRequest', () => {
  const form = { method: 'elicitation/create', params: { mode: 'form', message: 'ok?' } };
  const url = { method: 'elicitation/create', params: { mode: 'url', url: 'https://x' } };

  it('asks a form elicitation of a client that declared elicitation (bare means form)', () => {
    expect(isAskableInputRequest(form, { elicitation: {} })).toBe(true);
    expect(isAskableInputRequest(form, { elicitation: { url: {} } })).toBe(false);
    expect(isAskableInputRequest(form, {})).toBe(false);
  });

  it('asks a URL elicitation only of a client that declared elicitation.url', () => {
    expect(isAskableInputRequest(url, { elicitation: {} })).toBe(false);
    expect(isAskableInputRequest(url, { elicitation: { url: {} } })).toBe(true);
  });

  it('asks sampling and roots of clients that declared them, and nothing else', () => {
    const sampling = { method: 'sampling/createMessage', params: { messages: [] } };
    expect(isAskableInputRequest(sampling, { sampling: {} })).toBe(true);
    expect(isAskableInputRequest(sampling, { roots: {} })).toBe(false);
    expect(isAskableInputRequest({ method: 'roots/list' }, { roots: {} })).toBe(true);
    expect(isAskableInputRequest({ method: 'tools/list' }, { roots: {}, sampling: {} })).toBe(
      false,
    );
    expect(isAskableInputRequest('elicitation/create', { elicitation: {} })).toBe(false);
  });
});
