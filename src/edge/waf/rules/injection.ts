// Other injection rules: what injection.ts answers with.
import type { Rule } from './types.ts';

export const INJECTION_RULES: Rule[] = [
  { id: 934100, class: 'injection', description: 'server-side include directive' },
  { id: 934110, class: 'injection', description: 'template expression that does work ({{ }}, ${ }, #{ }, *{ }, <%= %>, FreeMarker directives)' },
  { id: 934120, class: 'injection', description: 'XML entity declarations and schema includes (XXE)' },
  { id: 934130, class: 'injection', description: 'LDAP filter injection' },
  { id: 934140, class: 'injection', description: 'NoSQL operators and server-side JavaScript' },
  { id: 944150, class: 'injection', description: 'Log4j lookup (${jndi:…}, nested lookups resolved: ${lower:j}, ${::-j}, ${date:\'j\'})', crs: '944150 (Log4j)' },
  { id: 921110, class: 'injection', description: 'mail protocol command on a new line (SMTP/IMAP injection)' },
  { id: 921120, class: 'injection', description: 'mail header on a new line in a value (Bcc:, Cc:, To:, From:, Reply-To: with an address, Subject:, Content-Type:)' },
  { id: 921100, class: 'injection', description: 'line break that starts a header (header injection); any line break at level 3', crs: '921 (protocol attacks: CRLF)' },
];
