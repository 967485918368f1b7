// Most of the detectors' patterns need a particular word somewhere in the text (sleep, union,
// document, etc/…, php://…) and would otherwise each scan the whole text for it. One scan finds
// which of those words a text holds, as a bit set by pattern; a pattern whose words are all absent
// cannot match and is not run. Every word listed must occur whole (between non-word characters,
// as \b reads them) in any match of the patterns of its group — that is what makes skipping
// safe; a group that lists a word too many only costs a scan.

const GROUPS = {
  /** sqli.ts: UNION SELECT inside a value. */
  union: 'union intersect except',
  /** sqli.ts: TIME_FUNCTIONS, WAITFOR DELAY. */
  delay: 'sleep pg_sleep benchmark dbms_lock dbms_pipe randomblob waitfor',
  /** sqli.ts: EXTRACTION. */
  extraction: 'extractvalue updatexml load_file group_concat concat_ws make_set export_set fn_varbintohexstr utl_inaddr utl_http dbms_xmlgen xp_dirtree xp_fileexist sys_eval sys_exec load_extension char concat',
  /** sqli.ts: SCHEMA. */
  schema: 'exec execute xp_dirtree xp_fileexist xp_regread xp_regwrite xp_servicecontrol xp_subdirs xp_cmdshell sp_executesql sp_oacreate sp_oamethod sp_makewebtask sp_addextendedproc sp_configure sp_password information_schema pg_catalog mysql sys master sysobjects syscolumns all_tables user_tables',
  /** xss.ts: SINKS. */
  sinks: 'alert prompt confirm print eval atob',
  /** xss.ts: TIMERS. */
  timers: 'setinterval settimeout setimmediate execscript eval function import importscripts',
  /** xss.ts: DOM. */
  dom: 'document window location localstorage sessionstorage innerhtml outerhtml srcdoc fromcharcode',
  /** xss.ts: PROTOTYPE (with "__proto__", which may end a longer word). */
  prototype: 'constructor prototype',
  /** shell.ts: CALLS. */
  calls: 'system passthru shell_exec popen proc_open pcntl_exec exec eval assert create_function execute executeglobal createobject',
  /** shell.ts: RUNTIME (__import__('os') names its module in quotes). */
  runtime: 'runtime java processbuilder os subprocess pty require wscript child_process',
  /** shell.ts: POWERSHELL. */
  powershell: 'iex invoke start webclient downloadstring downloadfile frombase64string diagnostics',
  /** shell.ts: GADGETS. */
  gadgets: 'phpinfo call_user_func call_user_func_array invokefunction post_render pre_render lazy_builder access_callback classloader',
  /** injection.ts: SERVER_JS. */
  serverJs: 'db do while for this sleep',
  /** paths.ts: SYSTEM_FILES. */
  systemFiles: 'etc windows winnt proc ssh aws boot win system ntuser web htpasswd inetpub var git svn hg htaccess ds_store env',
  /** paths.ts: WRAPPERS. */
  wrappers: 'php expect phar zip glob file jar compress ssh2 ogg rar gopher dict netdoc data',
} as const;

export type WordGroup = keyof typeof GROUPS;

/** The bit of each group. */
export const TRIGGERS = {} as Record<WordGroup, number>;
const BITS = new Map<string, number>();
for (const [i, group] of (Object.keys(GROUPS) as WordGroup[]).entries()) {
  TRIGGERS[group] = 1 << i;
  for (const word of GROUPS[group].split(' ')) BITS.set(word, (BITS.get(word) ?? 0) | (1 << i));
}

// Longest first is not needed (the closing \b makes the engine try the others), but it finds the
// whole word at once.
const ANY = new RegExp(`\\b(?:${[...BITS.keys()].sort((a, b) => b.length - a.length).join('|')})\\b`, 'g');

/** The groups whose words `text` holds (one scan, linear: a word list between word boundaries). */
export function triggerWords(text: string): number {
  let mask = 0;
  ANY.lastIndex = 0;
  for (let m = ANY.exec(text); m !== null; m = ANY.exec(text)) mask |= BITS.get(m[0])!;
  return mask;
}
