// Cross-site scripting rules: what xss.ts's HTML and script context scanner answers with.
import type { Rule } from './types.ts';

export const XSS_RULES: Rule[] = [
  { id: 941100, class: 'xss', description: 'a tag that runs or loads script (script, iframe, object, embed, svg, math, base, meta …)', crs: '941110 (script tag vectors)' },
  { id: 941110, class: 'xss', description: 'event handler attribute in a tag, after a broken-out quote, or starting the value', crs: '941120 (event handlers)' },
  { id: 941120, class: 'xss', description: 'javascript:, vbscript: or data:text/html URL where a browser follows it', crs: '941170 (script URLs)' },
  { id: 941130, class: 'xss', description: 'an attribute or element closed and a new tag opened ("><tag, --><tag, </title><tag)' },
  { id: 941140, class: 'xss', description: 'script sink called in code position (alert, prompt, confirm, print, eval; .call/.apply)' },
  { id: 941150, class: 'xss', description: 'DOM access and prototype pollution in code position' },
  { id: 941160, class: 'xss', description: 'timer, eval or Function with code in a string' },
  { id: 941170, class: 'xss', description: 'a string broken out of and a call made, or </script>' },
];
