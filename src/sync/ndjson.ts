// Lines of an NDJSON byte stream as they arrive, with the byte offset of each in the whole stream,
// so a snapshot of any size is handled one zone at a time and a stored copy can be read back at
// one zone's line. Splitting on bytes is safe: 0x0A never occurs inside a UTF-8 sequence.

export interface Line {
  text: string;
  /** Byte offset of the line's first byte in the whole stream. */
  offset: number;
}

export class LineSplitter {
  private pending: Buffer | undefined;
  /** Stream offset of pending[0] (or of the next chunk when nothing is pending). */
  private position = 0;

  /** The lines completed by this chunk (empty lines are skipped). */
  push(chunk: Uint8Array): Line[] {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const buffer = this.pending ? Buffer.concat([this.pending, bytes]) : bytes;
    const lines: Line[] = [];
    let start = 0;
    for (let end = buffer.indexOf(10); end !== -1; end = buffer.indexOf(10, start)) {
      if (end > start) lines.push({ text: buffer.toString('utf8', start, end), offset: this.position + start });
      start = end + 1;
    }
    this.position += start;
    // Copied, so a partial line does not keep a whole network chunk alive.
    this.pending = start < buffer.length ? Buffer.from(buffer.subarray(start)) : undefined;
    return lines;
  }

  /** The last line, if the stream did not end with a newline. */
  end(): Line[] {
    const rest = this.pending;
    this.pending = undefined;
    return rest && rest.length > 0 ? [{ text: rest.toString('utf8'), offset: this.position }] : [];
  }
}
