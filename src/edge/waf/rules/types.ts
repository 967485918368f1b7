// A WAF rule as data: an id, the attack class, a pattern matched against every decoded input
// (lower-cased, whitespace runs as one space), and where it comes from.
export interface Rule {
  id: number;
  class: 'sqli' | 'xss' | 'rce' | 'lfi' | 'injection' | 'protocol' | 'scanner';
  description: string;
  pattern: RegExp;
  /**
   * The OWASP CRS 3.3 rule (Apache-2.0) whose target this rule shares. The patterns here are
   * written for this engine, not copied; where one ever is adapted from CRS text, this names it
   * and the CRS licence applies to that pattern.
   */
  crs?: string;
  /** Not applied to bodies (where the pattern is ordinary: line breaks in a text field). */
  notInBody?: true;
  /**
   * Can match text made only of letters, digits and - _ . / (most inputs are such text: only
   * these rules are tried on it, the others need a character outside that set).
   */
  plain?: true;
}
