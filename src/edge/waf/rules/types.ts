// A WAF rule as data: its id (what the 403 page's log line and exclusions name), its class, what
// it detects, and where it comes from. The detection itself is code in ../ (one detector per
// language: sqli.ts, xss.ts, shell.ts, paths.ts, injection.ts), which answers with a rule id.
export type RuleClass = 'sqli' | 'xss' | 'rce' | 'lfi' | 'injection' | 'protocol' | 'scanner';

export interface Rule {
  id: number;
  class: RuleClass;
  description: string;
  /**
   * The OWASP CRS 3.3 rule (Apache-2.0) whose target this rule shares. Nothing of CRS's text is
   * copied: the detectors here are written for this engine from the published techniques.
   */
  crs?: string;
}
