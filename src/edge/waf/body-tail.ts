// The rest of a body past the inspection limit, watched as it streams to the backend (the
// "prefix" policy): bounded memory, linear time, and a verdict before the body's last bytes are
// sent, so that a refusal leaves the backend an unfinished request it never acts on.
//   multipart  every part that starts (or straddles the limit) is read as it would be within the
//              limit: its headers, name and file name, and its content (a field's always, a
//              file's unless its declared binary type is what it is) — up to PART_BYTES of each.
//              A form field after a large file is no way around the rules.
//   text       (forms, JSON, XML, text sent with an explicit `prefix` policy) the last TAIL_BYTES
//              are read at the end.
//   binary     nothing more to read (a declared image, archive, media… whose first bytes are one).
// Content-Encoding bodies never get here: past the limit they are refused (body-inspection.ts).
import { readBody, textBodyInputs, type BodyRead } from './body-parse.ts';
import { binaryType, mediaType, skippableBinary } from './body-types.ts';

/** At most this much of one part (its headers and content) is kept for reading. */
export const PART_BYTES = 64 * 1024;
/** The last bytes of a text body read at its end. */
export const TAIL_BYTES = 64 * 1024;

/** Reads a body read (inputs and refusals) and answers whether it is refused (the caller's rules and settings). */
export type ReadInputs = (read: BodyRead) => boolean;

export interface BodyTail {
  /** The next bytes of the body; true: refuse (stop sending). */
  chunk(bytes: Buffer): boolean;
  /** The body ended; true: refuse (do not send its last bytes). */
  end(): boolean;
}

/**
 * A watcher for the body's bytes after `prefix` (the bytes read so far, of which the first
 * `inspected` were inspected), or undefined when there is nothing more to read in it (binary).
 */
export function bodyTail(prefix: Buffer, inspected: number, contentType: string, read: ReadInputs): BodyTail | undefined {
  const type = contentType.toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = /boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
    if (boundary) return new MultipartTail(prefix, Math.min(inspected, prefix.length), boundary[1] ?? boundary[2]!, read);
  }
  const media = mediaType(type).type;
  if (binaryType(media) && skippableBinary(media, prefix)) return undefined;
  const tail = new TextTail(type, read);
  if (inspected < prefix.length) tail.chunk(prefix.subarray(inspected));
  return tail;
}

/** Text: a ring of the last TAIL_BYTES, read once at the end. */
class TextTail implements BodyTail {
  private readonly kept: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly type: string,
    private readonly read: ReadInputs,
  ) {}

  chunk(bytes: Buffer): boolean {
    this.kept.push(bytes);
    this.size += bytes.length;
    while (this.kept.length > 1 && this.size - this.kept[0]!.length >= TAIL_BYTES) this.size -= this.kept.shift()!.length;
    return false;
  }

  end(): boolean {
    const all = Buffer.concat(this.kept, this.size);
    const last = all.subarray(Math.max(0, all.length - TAIL_BYTES));
    // (Read by its declared type: the whole body's first bytes decided it is read, not these.)
    return this.read({ inputs: textBodyInputs(last, this.type), refusals: [] });
  }
}

/**
 * Multipart: the stream is searched for the delimiter (a carry of its length less one spans chunk
 * ends); each part is collected up to PART_BYTES and read whole, as readBody() reads a part,
 * when the next delimiter arrives.
 */
class MultipartTail implements BodyTail {
  private readonly delimiter: Buffer;
  private readonly type: string;
  /** The current part's bytes (after its delimiter), up to PART_BYTES; undefined before the first delimiter. */
  private part: Buffer[] | undefined;
  private partSize = 0;
  /** The end of the stream that may hold the start of a delimiter. */
  private carry: Buffer = Buffer.alloc(0);
  private closed = false;

  constructor(
    prefix: Buffer,
    inspected: number,
    private readonly boundary: string,
    private readonly read: ReadInputs,
  ) {
    this.delimiter = Buffer.from(`--${boundary}`);
    this.type = `multipart/form-data; boundary=${boundary}`;
    // The part that straddles the limit is read again whole, from its delimiter, and so is every
    // part after it among the bytes read past the limit.
    const last = prefix.lastIndexOf(this.delimiter, Math.max(0, inspected - 1));
    if (last >= 0) this.scan(prefix.subarray(last));
  }

  chunk(bytes: Buffer): boolean {
    return this.scan(bytes);
  }

  end(): boolean {
    if (this.closed) return false;
    // A last part without its closing delimiter is read as it stands (a lenient backend may).
    this.keep(this.carry);
    return this.finishPart();
  }

  private scan(bytes: Buffer): boolean {
    if (this.closed) return false;
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, bytes]) : bytes;
    let from = 0;
    for (;;) {
      const at = data.indexOf(this.delimiter, from);
      if (at < 0) break;
      this.keep(data.subarray(from, at));
      if (this.finishPart()) return true;
      from = at + this.delimiter.length;
      // "--boundary--" closes the body: what follows is epilogue.
      if (data.length >= from + 2 && data[from] === 0x2d && data[from + 1] === 0x2d) {
        this.closed = true;
        return false;
      }
      this.part = [];
      this.partSize = 0;
    }
    // Keep back what could be the start of a delimiter; the rest belongs to the current part.
    const keepFrom = Math.max(from, data.length - (this.delimiter.length + 1));
    this.keep(data.subarray(from, keepFrom));
    this.carry = Buffer.from(data.subarray(keepFrom));
    return false;
  }

  private keep(bytes: Buffer): void {
    if (!this.part || bytes.length === 0 || this.partSize >= PART_BYTES) return;
    const room = PART_BYTES - this.partSize;
    const piece = bytes.length > room ? bytes.subarray(0, room) : bytes;
    this.part.push(Buffer.from(piece));
    this.partSize += piece.length;
  }

  /** Reads the current part (if one was started) as a one-part body. */
  private finishPart(): boolean {
    const part = this.part;
    this.part = undefined;
    if (!part) return false;
    const body = Buffer.concat([this.delimiter, ...part, Buffer.from(`\r\n--${this.boundary}--\r\n`)]);
    return this.read(readBody(body, this.type));
  }
}
