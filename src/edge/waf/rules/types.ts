// A WAF rule as data: an id, the attack class, a pattern matched against every decoded input
// (lower-cased, whitespace runs as one space), and where it comes from.
export interface Rule {
  id: number;
  class: 'sqli' | 'xss' | 'rce' | 'lfi' | 'injection' | 'protocol' | 'scanner';
  description: string;
  pattern: RegExp;
  /** Set where a rule is adapted from OWASP CRS 3.3 (Apache-2.0): the CRS rule it follows. */
  crs?: string;
  /** Not applied to bodies (where the pattern is ordinary: line breaks in a text field). */
  notInBody?: true;
  /**
   * Can match text made only of letters, digits and - _ . / (most inputs are such text: only
   * these rules are tried on it, the others need a character outside that set).
   */
  plain?: true;
}
