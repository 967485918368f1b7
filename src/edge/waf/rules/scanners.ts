// User agents of vulnerability scanners and attack tools (the common ones CRS's scanners list
// names too).
import type { Rule } from './types.ts';

export const SCANNER_RULES: Rule[] = [
  {
    id: 913100,
    class: 'scanner',
    description: 'scanner or attack tool user agent',
    pattern: /\b(?:sqlmap|nikto|nessus|nmap|masscan|zgrab|acunetix|dirbuster|gobuster|ffuf|wpscan|nuclei|openvas|w3af|arachni|havij|jaeles|whatweb|wfuzz|commix|netsparker|appscan|burpcollaborator|zmeu|morfeus)\b/,
    crs: '913100 (scanners-user-agents.data)',
  },
];
