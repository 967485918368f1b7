// Path traversal and file inclusion, on paths normalised the ways servers resolve them: every
// percent-decoding round and overlong UTF-8 are done by the caller (decode.ts); here backslashes
// become slashes (Windows and IIS), path parameters are dropped from segments (Tomcat and Jetty
// read "..;/" as "../"), full-width dots and slashes are folded (NFKC, as .NET's best-fit does),
// and the segments are read: a ".." segment climbs, whatever spelled it.

import { TRIGGERS, triggerWords } from './trigger-words.ts';

export const LFI = {
  traversal: 930100,
  systemFile: 930110,
  unc: 930120,
  wrapper: 930130,
} as const;

/** The path a server would resolve: slashes, no ";params" in segments, NFKC, no empty segments. */
export function normalPath(text: string, ascii = !/[^\x00-\x7f]/.test(text)): string {
  // NFKC folds full-width dots and slashes; the slashes it keeps (division, fraction, big
  // solidus and set minus) are folded as Windows' best-fit mapping does.
  let t = ascii ? text : text.normalize('NFKC').replace(/[\u2215\u2044\u29f8]/g, '/').replace(/[\u2216\u29f9]/g, '\\');
  if (t.includes('\\')) t = t.replace(/\\/g, '/');
  if (t.includes(';')) t = t.replace(/;[^/?#]*(?=\/|$)/g, '');
  return t.includes('//') ? t.replace(/\/{2,}/g, '/') : t;
}

const PARENT = /(?:^|\/)\.{2,3}\s*(?:\/|$)/;
const CLIMB = /(?:^|\/)\.\.\/\.\.(?:\/|$)|(?:^|\/)\.\.\/(?:\.\/)*(?:etc|windows|winnt|boot\.ini|proc|var|usr|root|home|web-inf|meta-inf|\.ssh|\.git|\.env|\.aws|\.htpasswd|config|wp-config)\b/;
// Directories need their leading slash ("etc/hosts file" is a search); file names are distinctive alone.
// System32 needs a file in it: the directory alone is what a search box or a support form names.
const SYSTEM_FILES =
  /\/\.(?:git\/(?:config|head|index|logs)|svn\/(?:entries|wc\.db)|hg\/|htaccess|htpasswd|ds_store|env(?:\.[a-z]+)?$)|\/(?:inetpub\/\w+|var\/log\/(?:apache2?|httpd|nginx)\/|etc\/(?:nginx|apache2|httpd)\/\w|etc\/(?:passwd|shadow|group|gshadow|hosts|issue|sudoers|crontab|master\.passwd|security\/passwd)|windows\/(?:system32\/[\w$-]+|win\.ini|repair)|winnt\/system32\/[\w$-]+|proc\/self\/|proc\/\d+\/(?:environ|cmdline|maps)|\.ssh\/(?:id_\w+|authorized_keys)|\.aws\/credentials)\b|(?:^|[/\s])(?:boot\.ini|win\.ini|system\.ini|ntuser\.dat|web-inf\/web\.xml|\.htpasswd)\b/;
/** PHP code in a data: URL (include(data:…) runs it). */
const DATA_CODE = /\bdata:[\w.+-]*\/?[\w.+-]*(?:;[\w=.+-]+)*,\s*<\?(?:php|=)/;
const WRAPPERS = /\b(?:php|expect|phar|zip|glob|file|jar|compress\.zlib|compress\.bzip2|ogg|ssh2\.\w+|rar|gopher|dict|netdoc|data):\/\/|\bphp:\/\/(?:filter|input)|\bjar:[a-z]+:[^\s]*!\//;
/**
 * Remote file inclusion: a value that is a URL naming a file and ending in '?' (what an include
 * appends — ".php" — becomes its query), or naming a script or text file on an address.
 */
const REMOTE_INCLUDE = /^\s*(?:https?|ftps?):\/\/[^\s?#]+\/[^\s?#/]+\.[a-z0-9]{1,5}\?+\s*$|^\s*(?:https?|ftps?):\/\/(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\/\S*\.(?:txt|php\d?|phtml|inc|sh|pl|py)\b/;
const UNC = /^\/\/[^/\s]+\/[^/\s]|^\\\\[^\\\s]+\\[^\\\s]|\\\\[^\\\s]+\\[a-z]\$/;

/**
 * The traversal or inclusion rule `form` (decoded, lower case) matches; `inPath`: the form is the
 * request path; `words`: its trigger words (trigger-words.ts).
 */
export function pathAttack(form: string, inPath: boolean, level: number, words = triggerWords(form)): number | undefined {
  if (form.includes('\\') && UNC.test(form.replace(/^\s+/, ''))) return LFI.unc;
  // (Every character past ASCII takes more than one byte in UTF-8: a quicker test than a regex.)
  const ascii = Buffer.byteLength(form, 'utf8') === form.length;
  // ASCII text gains neither ".." nor a word through normalPath (it turns '\\' to '/', drops ";…"
  // up to a '/' or the end, joins slashes): without them in the form there is no path to read.
  // NFKC can make both.
  if (!ascii || form.includes('..') || (words & TRIGGERS.systemFiles) !== 0) {
    const path = normalPath(form, ascii);
    if (path.includes('..')) {
      if (inPath && PARENT.test(path)) return LFI.traversal;
      const value = path.trimStart();
      // A value that starts by climbing, climbs twice, or climbs towards a system directory; one
      // "../" inside a sentence ("use ../lib") takes a higher level.
      if (/^\.{2,3}\/\S/.test(value) || CLIMB.test(path) || (level >= 2 && PARENT.test(path))) return LFI.traversal;
    }
    const pathWords = ascii ? words : triggerWords(path);
    if ((pathWords & TRIGGERS.systemFiles) !== 0 && SYSTEM_FILES.test(path)) return LFI.systemFile;
  }
  if ((words & TRIGGERS.wrappers) !== 0 && form.includes(':/') && WRAPPERS.test(form)) return LFI.wrapper;
  if (form.includes('://') && REMOTE_INCLUDE.test(form)) return LFI.wrapper;
  if (form.includes('<?') && DATA_CODE.test(form)) return LFI.wrapper;
  return undefined;
}
