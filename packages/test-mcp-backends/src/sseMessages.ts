/**
 * The JSON messages of an SSE body, one per `data:` event, as a test reads a stream it holds open
 * (the generator ends with the body).
 */
export async function* sseMessages(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): AsyncGenerator<any, void, undefined> {
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const end = buffered.indexOf('\n\n');
    if (end >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = event
        .split('\n')
        .filter(line => line.startsWith('data: '))
        .map(line => line.slice(6))
        .join('\n');
      if (data !== '') yield JSON.parse(data);
      continue;
    }
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
  }
}
