// Command injection by shell structure: a value is read the way sh (and cmd.exe) would read it
// after quote removal ('c'a't' is cat), with $IFS and empty positional parameters as the blanks
// they expand to, brace expansion's {a,b} as "a b", and the words in command position — after a
// separator (; | || && & newline), in a substitution ($( ), backticks, <( )) — checked against
// commands a shell runs. A command needs arguments shaped like a command's (an option, a path, a
// URL or host, a redirection) or nothing after it, so "cat and dog" or "; copy should reach us"
// stay prose, and a line that starts with "Set" or "Type" is not a Windows command.

import { withoutQuotedCode } from './quoted-code.ts';
import { TRIGGERS, triggerWords } from './trigger-words.ts';

export const RCE = {
  command: 932100,
  substitution: 932110,
  shellshock: 932120,
  shellPath: 932130,
  option: 932140,
  interpreter: 932150,
} as const;

/** Commands that are rarely English words: a separator and the word is enough (with any argument shape or none). */
const DISTINCT = new Set(
  (
    'wget curl whoami uname ifconfig ipconfig netstat nslookup bash sh zsh ksh csh tcsh dash ash busybox python python2 python3 perl ruby php node nodejs lua ' +
    'powershell pwsh cmd certutil bitsadmin systeminfo tasklist taskkill wmic reg regsvr32 rundll32 mshta cscript wscript nc ncat netcat socat telnet ' +
    'chmod chown chgrp rm mkfifo mknod base64 xxd od hexdump uuencode crontab useradd usermod passwd sudo su nohup setsid xterm ' +
    'traceroute tracert nmap tftp ftp scp ssh sftp rsync gcc cc awk gawk nawk sed xargs printenv whois tcpdump iptables lsof pkill killall ' +
    'cat id ls dir pwd hostname ping ping6 sleep timeout echo printf env head tail more less find grep egrep fgrep touch cp mv kill ps tar zip unzip gzip dig host ' +
    'set type net ver vol rev'
  ).split(' '),
);
/** Of those, the ones that are also common words: they need an argument shaped like a command's, or a separator right after. */
const AMBIGUOUS = new Set('rev cat id ls dir pwd hostname ping sleep timeout echo printf env head tail more less find grep touch cp mv kill ps tar zip dig host set type net ver vol sh su cc od reg'.split(' '));
/** Windows built-ins that only count after ; | & (never at a line start: "Set the table"). */
const WINDOWS_BUILTIN = new Set(['set', 'type', 'dir', 'ver', 'vol', 'net']);
const NUMBER_ARG = new Set(['sleep', 'ping', 'ping6', 'timeout', 'kill']);
/** Words that end many sentences: as a command they need an argument ("… && more" is prose). */
const WORDS = new Set('more less find head tail touch kill sleep echo type host net cat timeout zip tar set printf grep cp mv'.split(' '));

/** A variable used ($x, ${x}): what the expansion of assigned variables replaces. */
const USED_VARIABLE = /\$\{?[a-z_]/;
const ASSIGNED = /(?<=^|[;|&\s])([a-z_][a-z0-9_]{0,20})=['"]?([a-z0-9./_-]{0,40})['"]?(?=[;|&\s]|$)/g;
const GLOB_COMMAND = /^\s*\/(?:[\w?*[\]]*\/){0,3}[\w[\]]*[?*][\w?*[\]]*(?=\s|$)/;

/** $IFS used ($ifs, ${ifs}): without it the pattern that also reads it matches what the shorter one does. */
const IFS_USED = /\$\{?ifs/;

/** Quote removal, $IFS and empty parameters as blanks, brace lists spread out. */
export function shellNormal(text: string): string {
  let t = text;
  // (Each step gated on a single character first where one is needed: the quickest search. No
  // step before the '$(' one makes a '$'.)
  const dollar = t.includes('$');
  // bash's ANSI-C quoting: $'\x69\x64' is "id".
  if (dollar && t.includes("$'")) t = t.replace(/\$'((?:\\x[0-9a-f]{2}|\\[0-7]{1,3}|[^'\\])*)'/g, (_m, body: string) => body.replace(/\\x([0-9a-f]{2})|\\([0-7]{1,3})/g, (_e, hex: string | undefined, oct: string | undefined) => String.fromCharCode(parseInt(hex ?? oct!, hex ? 16 : 8))));
  // cmd.exe: carets escape the next character (c^m^d is cmd), %COMSPEC% is the shell itself.
  if (t.includes('^')) t = t.replace(/\^(?=[\w/\\.-])/g, '');
  if (t.includes('%') && t.includes('%comspec%')) t = t.replace(/%comspec%/g, 'cmd');
  // sh: an empty substitution or parameter inside a word expands to nothing (wh$()oami), a
  // one-character glob class is that character (c[a]t).
  if (dollar && (t.includes('$(') || t.includes('${'))) t = t.replace(/\$\(\s*\)|\$\{\s*\}/g, '');
  if (t.includes('[')) t = t.replace(/(?<=[\w/.])\[(\w)\]|\[(\w)\](?=[\w/.])/g, '$1$2');
  if (t.includes('$')) t = IFS_USED.test(t) ? t.replace(/\$\{ifs\}|\$ifs(?![a-z0-9_])|\$\{?[0-9@*]\}?/g, (m) => (m.includes('ifs') ? ' ' : '')) : t.replace(/\$\{?[0-9@*]\}?/g, '');
  if (/['"\\]/.test(t)) t = t.replace(/\\\n/g, '').replace(/(?<=[\w/.])['"\\]+(?=[\w/.])|(?<=\s|^)['"]+(?=[\w/])|\\(?=[\w/])/g, '');
  if (t.includes('{') && t.includes(',')) t = t.replace(/\{([^{}\s]{1,200},[^{}\s]{0,200})\}/g, (_m, list: string) => ` ${list.split(',').join(' ')} `);
  return t;
}

/** Is this argument shaped like what a command takes (not like the next word of a sentence)? */
function argumentShape(arg: string, command: string): boolean {
  if (/^-{1,2}[a-z0-9]/.test(arg)) return true; // option
  if (/^(?:\/|\.{1,2}\/|~|[a-z]:(?:[\\/]|\w|$)|\\\\)/.test(arg)) return true; // path (a Windows one loses its backslashes to quote removal)
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(arg)) return true; // URL
  if (/^(?:\d{1,3}\.){3}\d{1,3}/.test(arg) || /^[a-z0-9-]+(?:\.[a-z0-9-]+)+\.?(?::\d+)?(?:\/|$)/.test(arg)) return true; // address or host name
  if (/^[$`<>*'"{]|^\d?>/.test(arg)) return true; // variable, substitution, redirection, glob, quoted
  if (/^\d+$/.test(arg)) return NUMBER_ARG.has(command);
  return false;
}

/** The command word at `at`: blanks and '(' first, a wrapper (sudo, nohup …) skipped; read within 200 characters. */
// (Runs bounded as the 200 characters bound them: read in place from every separator of "\n\n\n…",
// an unbounded run of blanks would read to the end each time.)
const COMMAND_WORD = /[\s(]{0,199}(?:(?:sudo|nohup|exec|command|builtin|env)\s{1,199})?([a-z0-9_./-]{1,40})/y;
const COMMAND_WORD_START = new RegExp(`^${COMMAND_WORD.source}`);

/**
 * A known command (DISTINCT) at `at` (after blanks), its base name, and what follows it within 200
 * characters; undefined for any other word (every caller wants a known one).
 */
function commandAt(text: string, at: number): { name: string; rest: string } | undefined {
  // Read in place, not from a copy of the next 200 characters: a match that ends within them is
  // the one the copy gives (the pattern has no end anchor); only a longer one is read again so.
  COMMAND_WORD.lastIndex = at;
  let m = COMMAND_WORD.exec(text);
  if (m && m[0].length > 200) m = COMMAND_WORD_START.exec(text.slice(at, at + 200));
  if (!m) return undefined;
  const word = m[1]!;
  const name = word.includes('/') ? word.slice(word.lastIndexOf('/') + 1) : word.endsWith('.exe') ? word.slice(0, -4) : word;
  if (!DISTINCT.has(name)) return undefined;
  if (word.includes('/') && !/^(?:\/usr(?:\/local)?)?\/s?bin\/[^/]+$/.test(word)) return undefined;
  return { name, rest: text.slice(at + m[0].length, at + 200) };
}

/** What every match of GLOB_COMMAND starts with (read in place: the glob itself only where one may start). */
const GLOB_START = /\s{0,59}\//y;

/**
 * A command run at `at`: a known command, and an argument list shaped like one (or nothing).
 * `separator` '\n' is a line break in a body (prose has lines starting with words); a line break
 * in a URL, header or cookie value counts as ';'.
 */
function runsCommand(text: string, at: number, separator: string): boolean {
  // A command named by a glob (/???/c?t, /bin/c*t): no one types that but to hide a name.
  GLOB_START.lastIndex = at;
  if (GLOB_START.test(text) && GLOB_COMMAND.test(text.slice(at, at + 60))) return true;
  const found = commandAt(text, at);
  if (!found) return false;
  const { name, rest } = found;
  // Inside $( ) or backticks any known command runs: prose has no substitutions.
  if (separator === '$(' || separator === '`' || separator === '<(' || separator === '>(') return true;
  // net with its subcommands (net user, net localgroup administrators …).
  if (name === 'net' && /^\s+(?:user|localgroup|group|view|share|use|session|accounts|start|stop)\b/.test(rest)) return WINDOWS_BUILTIN.has(name) && /[;|&]/.test(separator);
  if (WINDOWS_BUILTIN.has(name) && !/[;|&]/.test(separator)) return false;
  // Nothing after it, or another separator: "…;id", "|whoami&", "; ls; ".
  // (A closing quote or bracket ends it too: the value sits in a JSON or quoted string.)
  if (/^\s*(?:$|[;|&`)\n"'}\]#]|\$\()/.test(rest)) return !WORDS.has(name) && (!AMBIGUOUS.has(name) || separator !== '\n');
  if (!/^\s/.test(rest)) return false;
  // The argument ends where the command does: a blank, a separator, or the substitution's close.
  const arg = rest.trimStart().split(/[\s;|&`)]/, 1)[0]!;
  // After a pipe or &&/|| (prose has neither) a command that is no word needs no particular argument.
  if ((separator === '|' || separator === '||' || separator === '&&') && !AMBIGUOUS.has(name)) return true;
  // A line of a body (a Dockerfile's CMD [...], a note) needs an argument shaped like a command's.
  return argumentShape(arg, name) || (separator !== '\n' && !AMBIGUOUS.has(name) && !/^[a-z]+$/.test(arg));
}

const ANY_SUBSTRING = /\$\{[a-z_][a-z0-9_]{0,30}\s*:\s*~?-?\d+\s*:\s*\d+\s*\}/;
const ENV_SUBSTRING = /\$\{(?:path|home|pwd|oldpwd|shell|ls_colors|hostname|user|tmpdir|lang|ifs)\s*:\s*~?-?\d+\s*:\s*\d+\s*\}/;
const WINDOWS_FOR = /\bfor\s+\/[fl]\b[^\r\n]{0,200}?\bin\s*\(\s*['"`][^'"`\r\n]{1,200}['"`]\s*\)/;

/** Where a separator may start (a quick scan for the next candidate). */
const SEPARATOR_START = /[;|&\n`$<>]/g;

/** The separator at `i` (; | || & && newline ` $( <( >(), or undefined. */
function separatorAt(t: string, i: number): string | undefined {
  switch (t.charCodeAt(i)) {
    case 59 /* ; */:
      return ';';
    case 10 /* \n */:
      return '\n';
    case 96 /* ` */:
      return '`';
    case 124 /* | */:
      return t.charCodeAt(i + 1) === 124 ? '||' : '|';
    case 38 /* & */:
      return t.charCodeAt(i + 1) === 38 ? '&&' : '&';
    case 36 /* $ */:
      return t.charCodeAt(i + 1) === 40 ? '$(' : undefined;
    case 60 /* < */:
      return t.charCodeAt(i + 1) === 40 ? '<(' : undefined;
    case 62 /* > */:
      return t.charCodeAt(i + 1) === 40 ? '>(' : undefined;
    default:
      return undefined;
  }
}

/**
 * The command injection rule a decoded, lower-case form matches at `level`, if any (`words`: its
 * trigger words, trigger-words.ts). `search`: the value is a search box's parameter (inputs.ts):
 * at level 1 a command line as its whole value is what someone looks for ("ls -la /var/log", "cat
 * /proc/cpuinfo" in a docs search), unless it writes a file; separators, substitutions and the
 * rest are read as anywhere.
 */
export function commandInjection(form: string, level: number, words = triggerWords(form), inBody = true, search = false): number | undefined {
  // Prose (a forum post, a comment, a question) quotes code in Markdown: at level 1 its code
  // spans and fenced blocks are quoted, not run (quoted-code.ts). Anywhere else a backtick substitutes.
  const normal = shellNormal(form);
  const t = (level < 2 && withoutQuotedCode(normal)) || normal;
  if (t.includes('{') && /\(\s*\)\s*\{[^}]{0,60}\}\s*;/.test(t)) return RCE.shellshock;
  if (form.includes('$') && /\$\{ifs\}|\$ifs\b|\$\(\(\s*[\d$]/.test(form)) return RCE.substitution;
  // A character cut out of a variable (${PATH:0:1} is '/'): paths spelled without a slash. Any
  // variable outside a body; in a body (a script quoted in a post) only the environment's own.
  if (form.includes('${') && (inBody ? ENV_SUBSTRING : ANY_SUBSTRING).test(form)) return RCE.substitution;
  // cmd.exe's for /f runs the command in its parentheses: for /f %i in ('whoami') do …
  if (form.includes('for') && WINDOWS_FOR.test(form)) return RCE.command;
  for (let from = 0; from < t.length; ) {
    SEPARATOR_START.lastIndex = from;
    const found = SEPARATOR_START.exec(t);
    if (found === null) break;
    const index = found.index;
    const sep = separatorAt(t, index);
    if (sep === undefined) {
      from = index + 1;
      continue;
    }
    const at = index + sep.length;
    from = at;
    if (sep === '`') {
      const before = t[index - 1];
      // Runs of backticks are Markdown fences (```python), not substitutions.
      if (before === '`' || t[at] === '`') continue;
      const close = t.indexOf('`', at);
      if (close > at && runsCommand(t.slice(0, close), at, sep)) return RCE.substitution;
      continue;
    }
    if (runsCommand(t, at, sep === '\n' && !inBody ? ';' : sep)) return sep === '$(' || sep === '<(' || sep === '>(' ? RCE.substitution : RCE.command;
  }
  // Variables set in the value and used later in it (x=id;$x, a=i;b=d;$a$b): read with their values.
  // (Only a '$' before a name can be expanded: without one nothing changes.)
  if (t.includes('=') && t.includes('$') && USED_VARIABLE.test(t)) {
    const values = new Map<string, string>();
    for (const m of t.matchAll(ASSIGNED)) values.set(m[1]!, m[2]!);
    if (values.size > 0) {
      const expanded = t.replace(/\$\{?([a-z_][a-z0-9_]{0,20})\}?/g, (whole, name: string) => values.get(name) ?? whole);
      if (expanded !== t) {
        const found = commandInjection(expanded.replace(ASSIGNED, ' '), level, words, inBody, search);
        if (found !== undefined) return found;
      }
    }
  }
  // A value that is a line break and a known command alone ("\nid"): no text is that.
  if (t.includes('\n') && t.length < 64) {
    const word = t.trim();
    if (DISTINCT.has(word) && t.slice(0, t.indexOf(word)).includes('\n')) return RCE.command;
  }
  // A value that starts with a separator and a command of any name: text does not start so, a
  // value pasted after a command line's own argument does ("|anything host.example &").
  const lead = /^\s*(?:;|\|\|?|&&?|\$\(|`)\s*([a-z][\w.-]{0,30})((?:\s+[^\s;|&`]+){0,3})\s*([;|&`]|$)?/.exec(t);
  if (lead) {
    const args = lead[2]!.trim().split(/\s+/).filter(Boolean);
    if ((args.length === 0 && lead[3] !== undefined) || args.some((arg) => argumentShape(arg, lead[1]!))) return RCE.command;
  }
  if (commandLineAlone(t, level, search)) return RCE.command;
  if (SHELL_PATH_SLASH.test(t) && /\/bin\/(?:ba|z|k|c|tc|da)?sh(?:\s+-[a-z]|\s*$)|\/dev\/(?:tcp|udp)\/|\/proc\/self\/(?:environ|cmdline|fd)|\bcmd(?:\.exe)?\s+\/[ck]\s/.test(t)) return RCE.shellPath;
  if ((t.includes('--') || t.includes('proxycommand=')) && /(?:^|\s|[a-z0-9])--(?:exec|upload-pack|receive-pack|checkpoint-action|to-command|use-compress-program|post-file|rsh|rsync-path|output|output-document|config|use-askpass)=|-o\s*['"]?proxycommand=/.test(t)) return RCE.option;
  // find's -exec runs its argument: a value that is "-exec id ;" is passed to find as options.
  if (t.includes('-exec') && /^\s*-exec(?:dir)?\s+\S+[^;+]{0,100}(?:\\?;|\+)/.test(t)) return RCE.option;
  if (interpreter(form, words)) return RCE.interpreter;
  // PHP code in a URL, header or cookie value (no one sends a PHP statement there but to have it run).
  if (!inBody && form.includes('<?') && /<\?(?:php\b|=)\s*[^?\s][^?]{0,200};/.test(form)) return RCE.interpreter;
  return undefined;
}

/**
 * A value that is a command line by itself (a parameter a script passes to a shell): a distinct
 * command with an argument shaped like one; a common word only with an option or a system path.
 */
function commandLineAlone(t: string, level: number, search: boolean): boolean {
  const start = commandAt(t, 0);
  if (start && DISTINCT.has(start.name) && !WINDOWS_BUILTIN.has(start.name)) {
    // A redirection into a file writes it (echo … > /var/www/s.php): no search or sentence does
    // ("… > /dev/null 2>&1" is what a search for silencing a command holds).
    if (/\s\d?>{1,2}\s*(?!\/dev\/null\b)[/~]/.test(start.rest)) return true;
  }
  if (start && DISTINCT.has(start.name) && !WINDOWS_BUILTIN.has(start.name) && !(search && level < 2)) {
    const arg = /^\s/.test(start.rest) ? start.rest.trimStart().split(/\s/, 1)[0]! : '';
    // At level 1 only arguments no search or sentence has: a URL, a system path, a redirection or
    // substitution ("rm -rf meaning" and "python 3.12 notes" are searches); any shape at level 2.
    const strong = /^(?:[a-z][a-z0-9+.-]*:\/\/|\/(?:etc|bin|sbin|usr|tmp|var|dev|proc|home|root|windows)\b|[<>`$]|\d?>)/.test(arg);
    const shaped = AMBIGUOUS.has(start.name) ? strong : strong || (level >= 2 && argumentShape(arg, start.name) && !/^\d+$/.test(arg));
    if (arg && shaped) return true;
    if (level >= 3 && start.rest.trim() === '') return true;
  }
  return false;
}

/** A '/' followed by b, c, d, k or p: every shell path pattern has one (/bin/, /dev/, /proc/, cmd /c, cmd /k); a native scan. */
const SHELL_PATH_SLASH = /\/[bcdkp]/;

const CALLS = /\b(?:system|passthru|shell_exec|popen|proc_open|pcntl_exec|exec|eval|assert|create_function|execute|executeglobal|createobject)\s*\(\s*(?:["'`$@]|\(|base64_decode|gzinflate|str_rot13|chr\s*\(|request|\$_)/;
/** PHP code: an open tag and something that runs (backticks, superglobals, a call that executes or includes). */
const PHP_CODE = /<\?(?:php\b|=)[^?]{0,300}?(?:`|\$_(?:get|post|request|cookie|server|files)\b|\b(?:system|exec|passthru|shell_exec|eval|assert|popen|proc_open|include|require|include_once|require_once|file_put_contents|phpinfo)\s*\()/;
/** PowerShell's and .NET's ways to fetch and run code or start a process. */
const POWERSHELL = /\b(?:iex|invoke-expression)\s*(?:\(|\s[$('"])|\binvoke-webrequest\s+(?:-uri\s+)?['"]?https?:|\bstart-process\s+['"]?[\w\\/.:-]+\.exe\b|new-object\s+(?:system\.)?net\.webclient|\.download(?:string|file)\s*\(|\[\s*(?:system\.)?convert\s*\]\s*::\s*frombase64string\s*\(|\bsystem\.diagnostics\.process\s*[.\]:]/;
const RUNTIME = /\bruntime\s*\.\s*getruntime\s*\(\s*\)\s*\.\s*exec\b|\bnew\s+java\.lang\.processbuilder\b|\bprocessbuilder\s*\(|__import__\s*\(\s*['"](?:os|subprocess|pty)['"]|\bos\s*\.\s*(?:system|popen|exec\w*)\s*\(|\bsubprocess\s*\.\s*(?:call|run|popen|check_output)\s*\(|\brequire\s*\(\s*['"]child_process['"]|\bwscript\s*\.\s*shell\b|\bchild_process\b\s*[.)]/;
/** YAML tags that build objects of the host language (deserialisation gadgets). */
/** PHP and Java gadgets: phpinfo(), call_user_func, Drupal render arrays, Spring's class loader, Java serialisation. */
const GADGETS = /\bphpinfo\s*\(\s*\)|\bcall_user_func(?:_array)?\b|\binvokefunction\b|\[\s*#(?:post_render|pre_render|lazy_builder|access_callback)\s*\]|\bclass\.(?:module\.)?classloader\b/;
/** Java's serialised objects, base64 or hex (deserialisation gadgets ride in them). */
const JAVA_SERIAL = /^\s*(?:ro0ab|aced0005)/;
/** PHP's serialised objects (object injection): O:8:"stdClass":0:{…}. */
const PHP_OBJECT = /\bo:\d+:"[\w\\]+":\d+:\{/;
const YAML_TAG = /!!(?:[a-z]+)\/(?:object|name|module|apply|new)(?::|\/)|!ruby\/(?:object|hash|struct)|!!javax?\.|!!com\.|!!org\./;

function interpreter(form: string, formWords: number): boolean {
  const joined = form.includes('"&"') || form.includes("'+'") || form.includes('"+"') ? form.replace(/(['"])\s*[+&]\s*\1/g, '') : form;
  const words = joined === form ? formWords : triggerWords(joined);
  if ((words & TRIGGERS.powershell) !== 0 && POWERSHELL.test(joined)) return true;
  if (form.includes('<?') && PHP_CODE.test(form)) return true;
  if ((words & TRIGGERS.gadgets) !== 0 && GADGETS.test(form)) return true;
  if (form.includes(':"') && PHP_OBJECT.test(form)) return true;
  if (JAVA_SERIAL.test(form)) return true;
  return ((words & TRIGGERS.calls) !== 0 && joined.includes('(') && CALLS.test(joined)) || ((words & TRIGGERS.runtime) !== 0 && RUNTIME.test(joined)) || (form.includes('!') && YAML_TAG.test(form));
}
