/**
 * A `fetch` that pushes the text of every answer to a POST into `received` (for a test file's
 * scan for backend ids); a stream cut by its client's close reads as '' (never an unhandled
 * rejection).
 */
export function recordingFetch(received: Array<Promise<string>>): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'POST')
      received.push(
        response
          .clone()
          .text()
          .catch(() => ''),
      );
    return response;
  };
}
