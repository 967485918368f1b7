// Uploads a web server would run rather than store: file names with the extensions PHP, JSP,
// ASP(.NET) and CGI handlers are mapped to, and the per-directory configuration files that map
// others (.htaccess, .user.ini, web.config) — CRS 933110's target; and server code hidden behind
// an image's magic number ("GIF89a;<?php …"), which image checks by magic number let through and
// an include or a handler mapping then runs.

/** Extensions servers run by default (PHP's php3–php8, pht and phar included). */
const SERVER_EXTENSION = /\.(?:php\d*|phtml|pht|phar|jspx?|jspf|asp|aspx|ashx|asmx|asa|cgi)$/i;
/** Files that change how a directory's files are run. */
const SERVER_CONFIG = /(?:^|[/\\])(?:\.htaccess|\.user\.ini|web\.config)$/i;

/**
 * Whether an uploaded file's name is one the server would run: read as the server stores it —
 * its last path segment, cut at a NUL or at IIS's ';' (shell.asp;.jpg), trailing dots and spaces
 * dropped (Windows drops them).
 */
export function serverExecutableName(filename: string): boolean {
  for (const cut of [filename, ...filename.split(/\0|%00|;/, 1)]) {
    const name = cut.replace(/[.\s]+$/, '');
    if (SERVER_EXTENSION.test(name) || SERVER_CONFIG.test(name)) return true;
  }
  return false;
}

/** A PHP open tag with code after it (not "<?php" in prose: it needs white space or code after). */
const PHP_OPEN = /<\?php[\s(]/i;
/** Server code openings, short enough to occur by chance in binary data: only right after a magic number. */
const CODE_NEAR_START = /<\?(?:php[\s(]|=)|<%[@=!]|<%\s*(?:response|out|runtime|eval|exec|request)\b|<script\s+runat\s*=/i;
/** How far from the start a short opening counts. */
const NEAR = 64;

/**
 * Server code in a file skipped as binary: a PHP open tag anywhere in an image (EXIF comments are
 * where webshells hide), or any server code opening within its first bytes (behind a magic
 * number) in any file. Linear: one search of the content's Latin-1 text.
 */
export function codeBehindMagic(bytes: Buffer, image: boolean): boolean {
  const start = bytes.subarray(0, NEAR).toString('latin1');
  if (CODE_NEAR_START.test(start)) return true;
  if (!image) return false;
  // "<?" is rare in binary data (once per 64 KiB); each is checked for the tag.
  for (let at = bytes.indexOf('<?'); at >= 0; at = bytes.indexOf('<?', at + 2)) {
    if (PHP_OPEN.test(bytes.subarray(at, at + 6).toString('latin1'))) return true;
  }
  return false;
}

/** Headers upload scripts take a raw body's file name from (CRS 933110 reads the same). */
const FILE_NAME_HEADERS = ['x-filename', 'x_filename', 'x.filename', 'x-file-name'];

/** The header naming a raw upload's file as one the server would run, if any. */
export function serverExecutableHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of FILE_NAME_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && serverExecutableName(value)) return name;
  }
  return undefined;
}
