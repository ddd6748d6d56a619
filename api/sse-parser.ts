/** One server-sent event as `GET /v1/events` frames it. */
export interface SseMessage {
  /** The `event:` field; `message` when absent. */
  event: string;
  data: string;
  /** The `id:` field of this event, if it had one. */
  id: string | undefined;
}

/**
 * A small incremental parser of the `text/event-stream` format (the WHATWG rules the runner
 * uses: `field: value` lines, `:` comments, a blank line ends an event; CR, LF or CRLF). Written
 * here rather than taken from a package so the contract stays dependency-free for edge runtimes.
 * @example const feed = createSseParser((m) => console.log(m.event, m.data)); feed('data: 1\n\n');
 */
export function createSseParser(onMessage: (message: SseMessage) => void): (chunk: string) => void {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  const line = (text: string): void => {
    if (text === '') {
      if (data.length > 0) onMessage({ event: event || 'message', data: data.join('\n'), id });
      event = '';
      data = [];
      id = undefined;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
  };
  return (chunk) => {
    buffer += chunk;
    // A CR at the very end may be the first half of a CRLF: keep it for the next chunk.
    const lines = buffer.split(/\r\n|\r(?!$)|\n/);
    buffer = lines.pop() ?? '';
    for (const text of lines) line(text);
  };
}
