// Command and code injection rules: what shell.ts's command structure reader answers with.
import type { Rule } from './types.ts';

export const RCE_RULES: Rule[] = [
  { id: 932100, class: 'rce', description: 'a command in command position (after ; | || && & or a line break, brace lists, a value that is a command line, cmd.exe\'s for /f … in (\'command\'))', crs: '932100 (Unix command injection)' },
  { id: 932110, class: 'rce', description: 'command substitution ($( ), backticks, <( )), $IFS, arithmetic expansion, a character cut from a variable (${PATH:0:1})', crs: '932130 (shell expressions)' },
  { id: 932120, class: 'rce', description: 'shellshock function definition', crs: '932170 (shellshock)' },
  { id: 932130, class: 'rce', description: 'shells and devices used to run commands (/bin/sh -c, /dev/tcp, cmd /c)', crs: '932160 (Unix shell code)' },
  { id: 932140, class: 'rce', description: 'option injection into a command that runs another (--upload-pack=, -o ProxyCommand= …)' },
  { id: 932150, class: 'rce', description: 'code execution in interpreters (system(, eval( with code, Runtime.exec, YAML object tags)' },
];
