// Lines of an NDJSON byte stream as they arrive, with the byte offset of each in the whole stream,
// so a snapshot of any size is handled one zone at a time and a stored copy can be read back at
// one zone's line. Splitting on bytes is safe: 0x0A never occurs inside a UTF-8 sequence.

export interface Line {
  text: string;
  /** Byte offset of the line's first byte in the whole stream. */
  offset: number;
}

export class LineSplitter {
  /** The parts of a line not yet ended (a long line arrives over many chunks: joined once, at its end). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Stream offset of the pending line's first byte (or of the next chunk when nothing is pending). */
  private position = 0;

  /** The lines completed by this chunk (empty lines are skipped). */
  push(chunk: Uint8Array): Line[] {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lines: Line[] = [];
    let start = 0;
    // Only the new bytes are searched: a line of any length costs O(its length) in all.
    for (let end = bytes.indexOf(10); end !== -1; end = bytes.indexOf(10, start)) {
      const text =
        this.pending.length > 0 ? Buffer.concat([...this.pending, bytes.subarray(start, end)]).toString('utf8') : bytes.toString('utf8', start, end);
      if (text.length > 0) lines.push({ text, offset: this.position });
      this.position += this.pendingBytes + (end - start) + 1;
      this.pending = [];
      this.pendingBytes = 0;
      start = end + 1;
    }
    if (start < bytes.length) {
      // Copied, so a partial line does not keep a whole network chunk alive.
      this.pending.push(Buffer.from(bytes.subarray(start)));
      this.pendingBytes += bytes.length - start;
    }
    return lines;
  }

  /** The last line, if the stream did not end with a newline. */
  end(): Line[] {
    const rest = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    return rest.length > 0 ? [{ text: rest.toString('utf8'), offset: this.position }] : [];
  }
}
