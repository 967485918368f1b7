// What a body (or a multipart part) is, by what its Content-Type says a backend will parse it as —
// never by its bytes alone, which an attacker chooses: a form whose first bytes are "BM" is a form
// to PHP, Express and Django all the same. Only content declared binary may be skipped, and only
// when its bytes are that type's (a magic number check for a declared image, PDF, archive…);
// charsets a backend would decode into something the rules never saw are refused.

/** Request and part charsets a backend decodes the way the rules read them (CRS 920480's list, and utf8, a common spelling of UTF-8). */
const ALLOWED_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii', 'iso-8859-1', 'iso-8859-15', 'windows-1252']);
/** JSON is UTF-8 (RFC 8259); parsers that honour another charset (Jackson, ASP.NET) decode what the rules cannot read. */
const JSON_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);

/** Bytes at an offset. A signature is all of its pieces; a format is known by any of its signatures. */
type Magic = [bytes: number[], at: number];
type Signature = Magic[];
const sig = (bytes: number[], at = 0): Signature => [[bytes, at]];
const ascii = (text: string) => [...Buffer.from(text, 'latin1')];

// (PNG by four bytes: 0x89 first is not how text starts.)
const PNG = [sig([0x89, 0x50, 0x4e, 0x47])];
const JPEG = [sig([0xff, 0xd8, 0xff])];
const GIF = [sig(ascii('GIF87a')), sig(ascii('GIF89a'))];
/** RIFF containers by their form type (WEBP, WAVE, AVI ): "RIFF" alone is four letters of text. */
const RIFF = (form: string) => [[[ascii('RIFF'), 0], [ascii(form), 8]] as Signature];
const ISO_MEDIA = [sig(ascii('ftyp'), 4)];
const TIFF = [sig([0x49, 0x49, 0x2a, 0x00]), sig([0x4d, 0x4d, 0x00, 0x2a])];
const ICO = [sig([0x00, 0x00, 0x01, 0x00])];
const PSD = [sig(ascii('8BPS'))];
const PDF = [sig(ascii('%PDF-'))];
const ZIP = [sig([0x50, 0x4b, 0x03, 0x04]), sig([0x50, 0x4b, 0x05, 0x06]), sig([0x50, 0x4b, 0x07, 0x08])];
const GZIP = [sig([0x1f, 0x8b])];
const RAR = [sig([0x52, 0x61, 0x72, 0x21, 0x1a, 0x07])];
const OLE = [sig([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])];
const MATROSKA = [sig([0x1a, 0x45, 0xdf, 0xa3])];
const OGG = [sig(ascii('OggS'))];
const MP3 = [sig(ascii('ID3')), sig([0xff, 0xfb]), sig([0xff, 0xf3]), sig([0xff, 0xf2])];
/** Images by any image format's signature: a .jpg that is a PNG is common, and is still an image. */
const IMAGE = [...PNG, ...JPEG, ...GIF, ...RIFF('WEBP'), ...ISO_MEDIA, ...TIFF, ...ICO, ...PSD];

/** Declared binary types and the magic numbers their content starts with. */
const BY_TYPE = new Map<string, Signature[]>([
  ['image/png', PNG],
  ['image/apng', PNG],
  ['image/jpeg', JPEG],
  ['image/jpg', JPEG],
  ['image/pjpeg', JPEG],
  ['image/gif', GIF],
  ['image/webp', RIFF('WEBP')],
  ['image/tiff', TIFF],
  ['image/x-icon', ICO],
  ['image/vnd.microsoft.icon', ICO],
  ['image/avif', ISO_MEDIA],
  ['image/heic', ISO_MEDIA],
  ['image/heif', ISO_MEDIA],
  ['image/vnd.adobe.photoshop', PSD],
  ['application/pdf', PDF],
  ['application/zip', ZIP],
  ['application/x-zip-compressed', ZIP],
  ['application/java-archive', ZIP],
  ['application/epub+zip', ZIP],
  ['application/vnd.android.package-archive', ZIP],
  ['application/gzip', GZIP],
  ['application/x-gzip', GZIP],
  ['application/x-bzip2', [sig([0x42, 0x5a, 0x68])]],
  ['application/x-xz', [sig([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])]],
  ['application/x-7z-compressed', [sig([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])]],
  ['application/x-rar-compressed', RAR],
  ['application/vnd.rar', RAR],
  ['application/zstd', [sig([0x28, 0xb5, 0x2f, 0xfd])]],
  ['application/msword', OLE],
  ['application/vnd.ms-excel', OLE],
  ['application/vnd.ms-powerpoint', OLE],
  ['application/wasm', [sig([0x00, 0x61, 0x73, 0x6d])]],
  ['video/mp4', ISO_MEDIA],
  ['video/quicktime', ISO_MEDIA],
  ['video/3gpp', ISO_MEDIA],
  ['audio/mp4', ISO_MEDIA],
  ['audio/x-m4a', ISO_MEDIA],
  ['video/webm', MATROSKA],
  ['audio/webm', MATROSKA],
  ['video/x-matroska', MATROSKA],
  ['audio/ogg', OGG],
  ['video/ogg', OGG],
  ['audio/mpeg', MP3],
  ['audio/wav', RIFF('WAVE')],
  ['audio/x-wav', RIFF('WAVE')],
  ['audio/wave', RIFF('WAVE')],
  ['video/x-msvideo', RIFF('AVI ')],
  ['audio/flac', [sig([0x66, 0x4c, 0x61, 0x43])]],
  ['font/woff', [sig([0x77, 0x4f, 0x46, 0x46])]],
  ['font/woff2', [sig([0x77, 0x4f, 0x46, 0x32])]],
  ['font/ttf', [sig([0x00, 0x01, 0x00, 0x00])]],
  ['font/otf', [sig([0x4f, 0x54, 0x54, 0x4f])]],
]);

const BMP_TYPE = /^image\/(?:x-ms-|x-)?bmp$/;

/** Office Open XML and OpenDocument files are ZIP archives. */
const ZIP_FAMILY = /^application\/vnd\.(?:openxmlformats-officedocument\.|oasis\.opendocument\.|ms-[\w.-]+\.macroenabled)/;

/**
 * Binary types that name no one format (octet-stream, executables, serialisations like protobuf
 * or CBOR, vendor types but +json/+xml ones, and media and font types not listed above — never
 * SVG, which is XML): their content is binary by its bytes.
 */
const GENERIC_BINARY = new RegExp(
  '^(?:application/(?:octet-stream|x-binary|x-protobuf|protobuf|vnd\\.google\\.protobuf|grpc(?:-web)?(?:\\+proto)?|cbor|msgpack|x-msgpack|x-tar|x-msdownload|x-dosexec|x-executable|x-elf|x-sharedlib|x-mach-binary' +
    '|vnd\\.(?![\\w.-]*\\+(?:json|xml)$)[\\w.+-]+)|binary/octet-stream|(?:audio|video|font)/[\\w.+-]+|image/(?![\\w.-]*\\+xml$)[\\w.+-]+)$',
);

/** The media type (lower case, without parameters) and charset (lower case, unquoted) of a Content-Type. */
export function mediaType(contentType: string): { type: string; charset?: string } {
  const semi = contentType.indexOf(';');
  const type = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const charset = m ? (m[1] ?? m[2] ?? '').trim().toLowerCase() : undefined;
  return charset === undefined ? { type } : { type, charset };
}

/** Whether a declared charset is one a backend decodes the way the rules read it (none declared: yes). */
export function allowedCharset(charset: string | undefined): boolean {
  return charset === undefined || ALLOWED_CHARSETS.has(charset);
}

/** JSON, by its declared type (application/json, +json suffixes, json-seq, ndjson…). */
export function isJsonType(type: string): boolean {
  return type.includes('json');
}

/** XML, by its declared type. */
export function isXmlType(type: string): boolean {
  return type.includes('xml');
}

/**
 * Why a body (or a part; `file`: an uploaded file's) of this declared type and these first bytes
 * is not readable as the rules read text, or undefined when it is: a charset outside the allow-list, JSON in anything but UTF-8 (declared,
 * or by a UTF-16/32 BOM or the NUL pattern RFC 4627 detects it by), a UTF-16/32 BOM on text.
 */
export function unreadableEncoding(type: string, charset: string | undefined, bytes: Uint8Array, file = false): string | undefined {
  if (!allowedCharset(charset)) return `charset ${charset!.slice(0, 30)} (not allowed)`;
  const json = isJsonType(type);
  if (json && charset !== undefined && !JSON_CHARSETS.has(charset)) return `JSON in ${charset.slice(0, 30)} (only UTF-8)`;
  // An uploaded file is stored, not parsed as the request's data: its bytes' encoding is its own.
  if (file || GENERIC_BINARY.test(type) || BY_TYPE.has(type)) return undefined;
  if (wideBom(bytes)) return 'text in UTF-16 or UTF-32 (BOM)';
  // RFC 4627 §3: JSON's first two characters are ASCII, so NULs among the first four bytes tell UTF-16/32.
  if ((json || isXmlType(type)) && bytes.length >= 4 && (bytes[0] === 0 || bytes[1] === 0 || bytes[2] === 0 || bytes[3] === 0) && wideAscii(bytes)) return `${json ? 'JSON' : 'XML'} in UTF-16 or UTF-32`;
  return undefined;
}

function wideBom(b: Uint8Array): boolean {
  return (b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff) || (b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff);
}

/** ASCII in UTF-16 or UTF-32 (either byte order): NULs and non-NUL ASCII interleaved in the first 4 bytes. */
function wideAscii(b: Uint8Array): boolean {
  const z = (i: number) => b[i] === 0;
  const ascii = (i: number) => b[i]! > 0 && b[i]! < 0x80;
  return (z(0) && ascii(1) && z(2) && ascii(3)) || (ascii(0) && z(1) && ascii(2) && z(3)) || (z(0) && z(1) && z(2) && ascii(3)) || (ascii(0) && z(1) && z(2) && z(3));
}

function matches(bytes: Uint8Array, signature: Signature): boolean {
  for (const [magic, at] of signature) {
    if (bytes.length < at + magic.length) return false;
    for (let i = 0; i < magic.length; i++) if (bytes[at + i] !== magic[i]) return false;
  }
  return true;
}

/** A BMP: "BM", then reserved zeros and a known DIB header size (two bytes alone are any text's). */
function isBmp(b: Uint8Array): boolean {
  if (b.length < 18 || b[0] !== 0x42 || b[1] !== 0x4d || b[6] !== 0 || b[7] !== 0 || b[8] !== 0 || b[9] !== 0) return false;
  const dib = b[14]! | (b[15]! << 8) | (b[16]! << 16) | (b[17]! << 24);
  return [12, 16, 40, 52, 56, 64, 108, 124].includes(dib);
}

/** A tar archive: "ustar" at 257. */
function isTar(b: Uint8Array): boolean {
  return matches(b, sig(ascii('ustar'), 257));
}

/** Binary by its bytes alone: more than 5% control bytes (NUL counts) in its first KiB. */
function controlBytes(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 1024);
  let control = 0;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b < 32 && b !== 9 && b !== 10 && b !== 13 && b !== 12 && b !== 27) control++;
  }
  return n > 0 && control / n > 0.05;
}

/** Any format this module knows, by its magic number. */
function anyKnownFormat(bytes: Uint8Array): boolean {
  for (const signatures of BY_TYPE.values()) for (const s of signatures) if (matches(bytes, s)) return true;
  return isBmp(bytes) || isTar(bytes);
}

/**
 * Whether content of this declared type (lower case, no parameters) is what it declares and
 * binary, so that its bytes need not be read as text: a known format's magic number for a type
 * that names one; binary bytes (a known format, or control bytes) for a type that names none.
 * Anything else — text types, unknown types, a declared PNG that is not one — is read.
 */
export function skippableBinary(type: string, bytes: Uint8Array): boolean {
  if (type.startsWith('image/') && (BY_TYPE.has(type) || BMP_TYPE.test(type))) return isBmp(bytes) || IMAGE.some((s) => matches(bytes, s));
  const signatures = BY_TYPE.get(type);
  // Audio, video and fonts come in more variants than their signatures here (MPEG frame headers…): binary bytes will do.
  if (signatures) return signatures.some((s) => matches(bytes, s)) || (/^(?:audio|video|font)\//.test(type) && controlBytes(bytes));
  if (ZIP_FAMILY.test(type)) return ZIP.some((s) => matches(bytes, s));
  if (type === 'application/x-tar') return isTar(bytes) || controlBytes(bytes);
  if (GENERIC_BINARY.test(type)) return anyKnownFormat(bytes) || controlBytes(bytes);
  return false;
}

/** Whether this declared type is one skippableBinary() may skip (images, archives, media, octet-stream…). */
export function binaryType(type: string): boolean {
  return BY_TYPE.has(type) || ZIP_FAMILY.test(type) || GENERIC_BINARY.test(type) || BMP_TYPE.test(type);
}
