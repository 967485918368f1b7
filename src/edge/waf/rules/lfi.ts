// Path traversal and file inclusion rules: what paths.ts answers with on normalised paths.
import type { Rule } from './types.ts';

export const LFI_RULES: Rule[] = [
  { id: 930100, class: 'lfi', description: 'parent directory traversal after normalisation (encodings, overlong UTF-8, backslashes, ..;/)', crs: '930100 (path traversal)' },
  { id: 930110, class: 'lfi', description: 'well-known system files', crs: '930120 (OS file access)' },
  { id: 930120, class: 'lfi', description: 'UNC and administrative share paths' },
  { id: 930130, class: 'lfi', description: 'include wrappers and URL schemes of file inclusion', crs: '931 (remote file inclusion)' },
];
