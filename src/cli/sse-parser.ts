// A Server-Sent Events parser (the WHATWG "event stream interpretation"), fed text as it arrives:
// lines end in LF, CR or CRLF; "data" lines join with LF; a blank line dispatches; ":" lines are
// comments. The event id persists across messages, as an EventSource's last event id does.

export interface SseEvent {
  id: string;
  event: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private lastId = '';

  constructor(private readonly onEvent: (e: SseEvent) => void) {}

  /** The previous chunk ended in CR: an LF starting this one is the rest of that CRLF. */
  private skipLf = false;

  push(text: string): void {
    if (text === '') return;
    this.buffer += this.skipLf && text.startsWith('\n') ? text.slice(1) : text;
    this.skipLf = false;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) return;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      if (m[0] === '\r' && this.buffer === '') this.skipLf = true;
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.onEvent({ id: this.lastId, event: this.event || 'message', data: this.data.join('\n') });
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
  }
}
