// Cross-site scripting by HTML and JavaScript context: where a value would start to run script
// once a browser parsed the page it is echoed into. The forms arrive decoded the ways a browser
// decodes (character references, percent-decoding, escapes); here the markup is scanned as an
// HTML tokenizer reads it — a tag is '<' and a letter, its attributes are separated by spaces or
// '/', an event handler is an attribute named on… — and script positions (javascript: URLs, a
// string broken out of, a call) are recognised by what surrounds them, so prose that mentions
// "JavaScript:" or "an alert" is left alone.

import { TRIGGERS, triggerWords } from './trigger-words.ts';

export const XSS = {
  tag: 941100,
  handler: 941110,
  url: 941120,
  breakout: 941130,
  call: 941140,
  dom: 941150,
  timer: 941160,
  quote: 941170,
} as const;

/** DOM event names (HTML, SVG, pointer, touch, animation, media, clipboard, drag, form, window). */
const EVENTS = new Set(
  (
    'abort afterprint animationend animationiteration animationstart auxclick beforecopy beforecut beforeinput beforepaste beforeprint beforetoggle beforeunload begin blur bounce ' +
    'cancel canplay canplaythrough change click close contextmenu copy cuechange cut dblclick drag dragend dragenter dragleave dragover dragstart drop durationchange ' +
    'emptied end ended error finish focus focusin focusout formdata fullscreenchange hashchange input invalid keydown keypress keyup load loadeddata loadedmetadata loadend ' +
    'loadstart message mousedown mouseenter mouseleave mousemove mouseout mouseover mouseup mousewheel offline online pagehide pageshow paste pause play playing ' +
    'pointercancel pointerdown pointerenter pointerleave pointermove pointerout pointerover pointerup pointerrawupdate popstate progress ratechange repeat reset resize scroll scrollend ' +
    'search securitypolicyviolation seeked seeking select selectionchange selectstart show start stalled storage submit suspend timeupdate toggle touchcancel touchend ' +
    'touchmove touchstart transitioncancel transitionend transitionrun transitionstart unload volumechange waiting webkitanimationend webkitanimationiteration ' +
    'webkitanimationstart webkittransitionend wheel activate beforeactivate beforedeactivate deactivate readystatechange propertychange filterchange help move moveend ' +
    'movestart resizeend resizestart contentvisibilityautostatechange'
  ).split(' '),
);

/** Tags that run or load script by themselves (level 1), and ones that can be made to (level 2). */
const SCRIPT_TAGS = /<\/?(?:script|iframe|object|embed|svg|math|applet|meta|base|frameset|frame|xml|portal|isindex|xss)(?=[\s/>]|$)/;
// (An editor's HTML embeds iframes — videos, maps — by their URL; one that runs script has srcdoc,
// a script URL or a handler, read by the other rules.)
const SCRIPT_TAGS_IN_DOCUMENT = /<\/?(?:script|object|embed|applet|meta|base|frameset|frame|portal|isindex|foreignobject)(?=[\s/>]|$)|\bsrcdoc\s*=/;
const MORE_TAGS = /<\/?(?:style|link|template|img|image|video|audio|source|input|form|button|details|marquee|body|a|div|p|select|textarea|keygen|noscript|animate|set|use)(?=[\s/>]|$)/;
/** A style sheet that loads or runs something: @import, expression(), behaviors, bindings, script URLs. */
const STYLE_LOADS = /<style[\s>/][^<]{0,400}(?:@import|expression\s*\(|behavior\s*:|-moz-binding|url\s*\(\s*['"]?\s*(?:java|vb)script:)/;
/** A character that ends the code before a call: the value then sits in script. */
const CODE_BEFORE = /(?:^|[;(){}[\],=+\-*/|&!?:<>'"`~^]|javascript:)\s*$/;
const SINKS = /\b(?:alert|prompt|confirm|print|eval|atob)\s*(?:\(|`)|\b(?:alert|prompt|confirm|print|eval)\s*\.\s*(?:call|apply|bind)\s*\(|\(\s*(?:alert|prompt|confirm|print|eval)\s*\)\s*[(`]|\[\s*['"`](?:alert|prompt|confirm|eval)['"`]\s*\]\s*[(`]/g;
const TIMERS = /\b(?:setinterval|settimeout|setimmediate|execscript|eval|function)\s*\(\s*['"`]|\bnew\s+function\s*\(|\bimport\s*\(\s*['"`]|\bimportscripts\s*\(/;
const DOM = /\b(?:document\s*\.\s*(?:cookie|domain|write|writeln|location|body\.innerhtml)|window\s*\.\s*(?:location|name|open)|location\s*\.\s*(?:href|hash|replace|assign)|localstorage|sessionstorage|\.innerhtml|\.outerhtml|\.srcdoc|fromcharcode)\b/g;
const PROTOTYPE_ANY = /__proto__\s*[[.=]|\bconstructor\s*\.\s*prototype\b|\bconstructor\s*\(\s*['"`]|\[\s*['"`]?constructor['"`]?\s*\]|\bprototype\s*\[\s*['"`]?\w+/;
/** At level 1 only what writes through the prototype (prose says "obj.__proto__." and "constructor.prototype"). */
const PROTOTYPE = /__proto__\s*(?:\[|=(?!=)|\.\s*[\w$]+\s*(?:=(?!=)|\[))|\bconstructor\s*\.\s*prototype\s*(?:\[|\.\s*[\w$]+\s*=(?!=))|\bconstructor\s*\(\s*['"`]|\[\s*['"`]?constructor['"`]?\s*\]|\bprototype\s*\[\s*['"`]?\w+/;
const BREAKOUT = /['"`]\s*\/?>\s*<[a-z!/]|-->\s*<[a-z]|<\/(?:title|textarea|style|noscript|xmp|iframe|template|option|select)\s*>\s*<[a-z]/;
const QUOTE_CALL = /['"`]\s*\)*\s*[-+*/%&|^;,]+\s*[\w$.[\]'"]{1,40}\s*(?:\(|`)[^)\s]{0,60}\)?\s*(?:;|\/\/|<!--|['"`]|$)/;
// (An SVG image as a data: URL runs no script where images are shown; its content, decoded, is read as any text is.)
const SCRIPT_URL = /(?:java|vb|live)script\s*:|data\s*:\s*(?:text\/html|application\/(?:x-)?(?:javascript|xhtml))/g;

/** Event attributes of script frameworks that evaluate their value: AngularJS ng-<event>, Vue v-on: and @, Alpine x-on:. */
const FRAMEWORK_HANDLER = /^(?:ng-(?:click|dblclick|focus|blur|change|submit|copy|cut|paste|init|mouse[a-z]+|key[a-z]+)|v-on:[a-z]+|x-on:[a-z]+|@[a-z]+)$/;

/** HTML's blanks (space, tab, LF, FF, CR), by code: tagHandler reads a document character by character. */
const blank = (c: number) => c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
const SLASH = 47;
const GT = 62;
const LT = 60;
const EQUALS = 61;

/** An attribute named on<event> inside a tag ('<' and a letter, attributes up to '>'). */
function tagHandler(text: string): boolean {
  const n = text.length;
  let i = text.indexOf('<');
  while (i >= 0 && i < n) {
    let j = i + 1;
    if (text.charCodeAt(j) === SLASH) j++;
    const first = text.charCodeAt(j);
    if (!(first >= 97 && first <= 122)) {
      i = text.indexOf('<', i + 1);
      continue;
    }
    for (let c = text.charCodeAt(j); j < n && !blank(c) && c !== SLASH && c !== GT; c = text.charCodeAt(++j));
    const end = Math.min(n, j + 1024);
    while (j < end && text.charCodeAt(j) !== GT && text.charCodeAt(j) !== LT) {
      for (let c = text.charCodeAt(j); j < end && (blank(c) || c === SLASH); c = text.charCodeAt(++j));
      const start = j;
      for (let c = text.charCodeAt(j); j < end && !blank(c) && c !== SLASH && c !== GT && c !== EQUALS; c = text.charCodeAt(++j));
      let k = j;
      while (k < end && blank(text.charCodeAt(k))) k++;
      if (text.charCodeAt(k) === EQUALS) {
        const name = text.slice(start, j);
        if (/^on[a-z]{3,}$/.test(name) || FRAMEWORK_HANDLER.test(name)) return true;
        k++;
        while (k < end && blank(text.charCodeAt(k))) k++;
        const quote = text[k];
        if (quote === '"' || quote === "'") {
          const close = text.indexOf(quote, k + 1);
          k = close < 0 ? end : close + 1;
        } else for (let c = text.charCodeAt(k); k < end && !blank(c) && c !== GT; c = text.charCodeAt(++k));
        j = k;
      } else if (j === start) j++;
    }
    i = text.indexOf('<', j);
  }
  return false;
}

/** on<event>= right after a quote or slash (an attribute broken out of), or at the start of the value. */
function looseHandler(text: string, anywhere: boolean): boolean {
  for (const m of text.matchAll(/on([a-z]{3,40})\s*=/g)) {
    if (!EVENTS.has(m[1]!)) continue;
    const before = text.slice(Math.max(0, m.index - 8), m.index);
    if (m.index === 0 || /(?:["'`/]|["'`][\s/]+)$/.test(before) || /^\s+$/.test(text.slice(0, m.index))) return true;
    if (anywhere && /\s$/.test(before)) return true;
  }
  return false;
}

/** A script URL where a browser would follow it: the value's start, an attribute, url(), or code after it. */
function scriptUrl(text: string): boolean {
  // Browsers drop tabs and line breaks inside a URL's scheme.
  const t = /[\t\n\r]/.test(text) ? text.replace(/[\t\n\r]/g, '') : text;
  for (const m of t.matchAll(SCRIPT_URL)) {
    const before = t.slice(Math.max(0, m.index - 16), m.index);
    const after = t.slice(m.index + m[0].length, m.index + m[0].length + 80);
    // Where a URL is followed (the value's start, an attribute, url()) and something follows the
    // colon at once; or code after it wherever it stands ("JavaScript: Basics of …" is neither).
    const position = m.index === 0 || /[=("'`]\s*$/.test(before) || t.slice(0, m.index).trim() === '';
    if (position && /^\S/.test(after)) return true;
    if (/^\s*(?:[\w$.[\]'"]+\s*[(`=]|[[(!'"`/{~+-])/.test(after)) return true;
  }
  return false;
}

/** The markup a sanitiser that strips tags would leave ("o<x>nfocus" → "onfocus"). */
function withoutBareTags(text: string): string {
  return text.replace(/<\/?[a-z][a-z0-9]{0,9}>/g, '');
}

/** String concatenation undone ('al'+'ert' → alert, "Ex"&"e" → Exe). */
export function joinedStrings(text: string): string {
  return text.replace(/(['"])\s*[+&]\s*\1/g, '');
}

function scan(text: string, level: number, words = triggerWords(text), document = false): number | undefined {
  const lt = text.includes('<');
  if (lt) {
    // A markup document's own vocabulary (an SVG image, XML, MathML) is no tag injected into one.
    if ((document ? SCRIPT_TAGS_IN_DOCUMENT : SCRIPT_TAGS).test(text)) return XSS.tag;
    if (tagHandler(text)) return XSS.handler;
    // A whole markup document closes its own attributes and opens tags ("…"/><b>"): no breakout.
    if (!document && BREAKOUT.test(text)) return XSS.breakout;
    if (text.includes('<style') && STYLE_LOADS.test(text)) return XSS.tag;
    if (level >= 2 && MORE_TAGS.test(text)) return XSS.tag;
  }
  // A handler needs '=', a script URL ':' (single characters: the quickest searches come first).
  if (text.includes('=') && text.includes('on') && looseHandler(text, level >= 2)) return XSS.handler;
  if (text.includes(':')) {
    // The gate looks at the text as a browser reads a URL: without tabs and line breaks
    // ("javascr\tipt:" is "javascript:").
    const plain = /[\t\n\r]/.test(text) ? text.replace(/[\t\n\r]/g, '') : text;
    if ((plain.includes('script') || plain.includes('data')) && scriptUrl(text)) return XSS.url;
  }
  if (text.includes('(') || text.includes('`')) {
    if (words & TRIGGERS.sinks) {
      for (const m of text.matchAll(SINKS)) {
        // print( is Python's too: only in a handler (caught there) or at level 2.
        if (level < 2 && /^\W*print/.test(m[0])) continue;
        if (level >= 2 || CODE_BEFORE.test(text.slice(Math.max(0, m.index - 12), m.index)) || m[0].startsWith('(') || m[0].startsWith('[')) return XSS.call;
      }
    }
    if (words & TRIGGERS.timers && TIMERS.test(text)) return XSS.timer;
    if ((text.includes("'") || text.includes('"') || text.includes('`')) && QUOTE_CALL.test(text)) return XSS.quote;
  }
  if (text.includes('</script')) return XSS.quote;
  if (words & TRIGGERS.dom) {
    for (const m of text.matchAll(DOM)) {
      const before = text.slice(Math.max(0, m.index - 12), m.index);
      const after = text.slice(m.index + m[0].length, m.index + m[0].length + 4);
      // In code: after code punctuation, or used (assigned, called, passed); not a value that names it.
      if (level >= 2 || (CODE_BEFORE.test(before) && before.trim() !== '' && m.index > 0) || /^\s*[=);.+[(]/.test(after)) return XSS.dom;
    }
  }
  // Each alternative holds "__proto__" or the whole word constructor or prototype.
  if (text.includes('__proto__') || (words & TRIGGERS.prototype) !== 0) {
    if ((level >= 2 ? PROTOTYPE_ANY : PROTOTYPE).test(text)) return XSS.dom;
  }
  return undefined;
}

/** The XSS rule a decoded, lower-case form matches at `level`, if any (`words`: its trigger words, trigger-words.ts; `document`: a whole markup document). */
export function crossSiteScripting(form: string, level: number, words = triggerWords(form), document = false): number | undefined {
  const found = scan(form, level, words, document);
  if (found) return found;
  const joined = form.includes('+') || form.includes('&') ? joinedStrings(form) : form;
  if (joined !== form) {
    const again = scan(joined, level, triggerWords(joined), document);
    if (again) return again;
  }
  if (form.includes('<')) {
    const stripped = withoutBareTags(form);
    if (stripped !== form) return scan(stripped, level, triggerWords(stripped), document);
  }
  return undefined;
}
