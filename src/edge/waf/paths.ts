// Path traversal and file inclusion, on paths normalised the ways servers resolve them: every
// percent-decoding round and overlong UTF-8 are done by the caller (decode.ts); here backslashes
// become slashes (Windows and IIS), path parameters are dropped from segments (Tomcat and Jetty
// read "..;/" as "../"), full-width dots and slashes are folded (NFKC, as .NET's best-fit does),
// and the segments are read: a ".." segment climbs, whatever spelled it.

export const LFI = {
  traversal: 930100,
  systemFile: 930110,
  unc: 930120,
  wrapper: 930130,
} as const;

/** The path a server would resolve: slashes, no ";params" in segments, NFKC, no empty segments. */
export function normalPath(text: string): string {
  let t = /[^\x00-\x7f]/.test(text) ? text.normalize('NFKC') : text;
  if (t.includes('\\')) t = t.replace(/\\/g, '/');
  if (t.includes(';')) t = t.replace(/;[^/?#]*(?=\/|$)/g, '');
  return t.replace(/\/{2,}/g, '/');
}

const PARENT = /(?:^|\/)\.{2,3}\s*(?:\/|$)/;
const CLIMB = /(?:^|\/)\.\.\/\.\.(?:\/|$)|(?:^|\/)\.\.\/(?:\.\/)*(?:etc|windows|winnt|boot\.ini|proc|var|usr|root|home|web-inf|meta-inf|\.ssh|\.git|\.env|\.aws|\.htpasswd|config|wp-config)\b/;
// Directories need their leading slash ("etc/hosts file" is a search); file names are distinctive alone.
const SYSTEM_FILES =
  /\/(?:etc\/(?:passwd|shadow|group|gshadow|hosts|issue|sudoers|crontab|master\.passwd|security\/passwd)|windows\/(?:system32|win\.ini|repair)|winnt\/system32|proc\/self\/|proc\/\d+\/(?:environ|cmdline|maps)|\.ssh\/(?:id_\w+|authorized_keys)|\.aws\/credentials)\b|(?:^|[/\s])(?:boot\.ini|win\.ini|system\.ini|ntuser\.dat|web-inf\/web\.xml|\.htpasswd)\b/;
const WRAPPERS = /\b(?:php|expect|phar|zip|glob|file|jar|compress\.zlib|compress\.bzip2|ogg|ssh2\.\w+|rar|gopher|dict|netdoc|data):\/\/|\bphp:\/\/(?:filter|input)|\bjar:[a-z]+:[^\s]*!\//;
const UNC = /^\/\/[^/\s]+\/[^/\s]|\\\\[^\\\s]+\\[a-z]\$/;

/** The traversal or inclusion rule `form` (decoded, lower case) matches; `inPath`: the form is the request path. */
export function pathAttack(form: string, inPath: boolean, level: number): number | undefined {
  if (UNC.test(form.replace(/^\s+/, '')) && form.includes('\\')) return LFI.unc;
  {
    const path = normalPath(form);
    if (path.includes('..')) {
      if (inPath && PARENT.test(path)) return LFI.traversal;
      const value = path.trimStart();
      // A value that starts by climbing, climbs twice, or climbs towards a system directory; one
      // "../" inside a sentence ("use ../lib") takes a higher level.
      if (/^\.{2,3}\/\S/.test(value) || CLIMB.test(path) || (level >= 2 && PARENT.test(path))) return LFI.traversal;
    }
    if (SYSTEM_FILES.test(path)) return LFI.systemFile;
  }
  if (form.includes(':/') && WRAPPERS.test(form)) return LFI.wrapper;
  return undefined;
}
