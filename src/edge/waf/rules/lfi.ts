// Path traversal and file inclusion: parent directories (after decoding), absolute paths to
// well-known files, UNC paths, wrapper schemes.
import type { Rule } from './types.ts';

export const LFI_RULES: Rule[] = [
  { id: 930100, class: 'lfi', description: 'parent directory traversal', pattern: /(?:^|[\\/])\.\.(?:[\\/]|$)/, crs: '930100 (path traversal)', plain: true },
  { id: 930110, class: 'lfi', description: 'well-known system files', pattern: /(?:^|[\\/])(?:etc[\\/](?:passwd|shadow|group|hosts)|boot\.ini|win\.ini|windows[\\/]system32|ntuser\.dat|proc[\\/]self[\\/])/, crs: '930120 (OS file access)', plain: true },
  { id: 930120, class: 'lfi', description: 'UNC and administrative share paths', pattern: /\\\\[^\\]+\\[a-z]\$|^\\\\/ },
  { id: 930130, class: 'lfi', description: 'include wrappers', pattern: /\b(?:php|expect|phar|zip|data|glob|file|jar):\/\//, crs: '931 (remote file inclusion)' },
];
