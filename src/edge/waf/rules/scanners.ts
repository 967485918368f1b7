// User agents of vulnerability scanners and attack tools: the names these tools send by
// default (CRS keeps a list with the same aim, scanners-user-agents.data).
import type { Rule } from './types.ts';

export const SCANNER_RULE: Rule = { id: 913100, class: 'scanner', description: 'scanner or attack tool user agent', crs: '913100 (scanners-user-agents.data)' };

export const SCANNER_AGENT =
  /\b(?:sqlmap|sqlninja|bsqlbf|havij|nikto|nessus|nmap|nmap scripting engine|masscan|zgrab|acunetix|dirbuster|dirb|gobuster|feroxbuster|ffuf|wfuzz|wpscan|joomscan|droopescan|nuclei|openvas|w3af|arachni|skipfish|jaeles|whatweb|commix|netsparker|invicti|appscan|webinspect|zmeu|morfeus|fimap|grabber|paros|owasp zap|zaproxy|xsstrike|dalfox|hydra|medusa|brutus|metasploit|webshag|vega|qualys|detectify|sitelockspider|jorgee|muieblackcat|dotdotpwn|crimscanner|sysscan|nsauditor|pangolin|bfac|cgichk|grendel-scan|n-stealth|httprint|wapiti|uniscan|golismero|sqlsus|xsser|cmsmap|magescan|mysqloit|nexpose|struts-pwn|l9explore|vulnx|wascan|teh forest lobster|fuzz faster u fool|dirsearch|sf\/\d)\b/;
