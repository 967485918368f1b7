// Command injection (Unix and Windows shells, shellshock), and code injection in interpreters
// (YAML deserialisation, eval/execute).
import type { Rule } from './types.ts';

const COMMANDS = 'cat|ls|id|wget|curl|nc|ncat|netcat|bash|sh|zsh|getent|whoami|uname|ping|nslookup|dig|echo|set|dir|type|rm|chmod|python|perl|php|ruby|powershell|cmd';

export const RCE_RULES: Rule[] = [
  { id: 932100, class: 'rce', description: 'command after a shell separator', pattern: new RegExp(`(?:[;|&\`\\n]|\\$\\()\\s*(?:${COMMANDS})(?:\\b|\\$ifs)`), crs: '932100 (Unix command injection)' },
  { id: 932110, class: 'rce', description: 'command substitution and shell variables', pattern: /\$\(\s*\w|`[^`]{1,100}`|\$\{?ifs\b|\$\(\(\s*\d/, crs: '932130 (shell expressions)' },
  { id: 932120, class: 'rce', description: 'shellshock', pattern: /\(\s*\)\s*\{\s*[:;]/, crs: '932170 (shellshock)' },
  { id: 932130, class: 'rce', description: 'shell paths and sensitive files', pattern: /\/bin\/(?:ba|z|k|c)?sh\b|\/etc\/(?:passwd|shadow|hosts)\b|\/e['"]?t['"]?c\/p['"]?a['"]?s['"]?s['"]?w['"]?d/, crs: '932160 (Unix shell code)', plain: true },
  { id: 932140, class: 'rce', description: 'option injection into a command (--exec=, -o ProxyCommand=)', pattern: /--(?:exec|upload-pack|receive-pack|output|config)=|proxycommand=/ },
  { id: 932150, class: 'rce', description: 'deserialisation and eval in interpreters', pattern: /!!python\/|\bev\s*a\s*l\s*\(|\bexecute\s*\(\s*["']|\bcreateobject\s*\(|\bsystem\s*\(\s*['"]|\bpassthru\s*\(|\bshell_exec\s*\(|\bruntime\s*\.\s*getruntime\b/, plain: true },
];
