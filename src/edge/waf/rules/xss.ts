// Cross-site scripting: markup that runs script, event-handler attributes, script URLs, and the
// usual call shapes of alert/prompt/confirm probes.
import type { Rule } from './types.ts';

export const XSS_RULES: Rule[] = [
  { id: 941100, class: 'xss', description: 'script, iframe, object, embed, svg or body tags', pattern: /<\s*\/?\s*(?:script|iframe|object|embed|svg|applet|meta|base|frameset|body|math|style|link)\b/, crs: '941110 (script tag vectors)' },
  { id: 941110, class: 'xss', description: 'event handler attribute', pattern: /(?:^|[\s"'`/<>;])on(?:load|error|mouse\w+|focus|blur|click|dblclick|key\w+|wheel|submit|change|input|pointer\w+|animation\w+|toggle|begin|end|x)\s*=/, crs: '941120 (event handlers)' },
  { id: 941120, class: 'xss', description: 'javascript: or vbscript: URL', pattern: /(?:java|vb)script:(?!\s)/, crs: '941170 (script URLs)' },
  { id: 941130, class: 'xss', description: 'tags with a source or handler', pattern: /<\s*(?:img|input|video|audio|source|details|marquee|p|a|div|x)\b[^>]{0,200}\b(?:src|href|on\w+)\s*=/ },
  { id: 941140, class: 'xss', description: 'probe calls: alert/prompt/confirm and call/apply on them', pattern: /\b(?:alert|prompt|confirm)\s*(?:\(|`|\.\s*(?:call|apply)\s*\()|\((?:alert|prompt|confirm)\)\s*[(`]/ },
  { id: 941150, class: 'xss', description: 'DOM access and prototype tricks', pattern: /\bdocument\s*\.\s*(?:cookie|domain|write|location)\b|\bconstructor\s*\(\s*['"]|__proto__\s*\[|\bwindow\s*\.\s*location\b|\bself\.\w+\s*=\s*!?\w+\(/, plain: true },
  { id: 941160, class: 'xss', description: 'timer or fetch with code in a string', pattern: /\bset(?:interval|timeout)\s*\(\s*['"`]/ },
  { id: 941170, class: 'xss', description: 'quote breaking into script', pattern: /['"]\s*\)?\s*;?\s*-?\s*(?:alert|prompt|confirm)\s*\(|<\/script\s*>/ },
];
