// Request forgery and prototype pollution rules: what ssrf.ts and pollution.ts answer with.
import type { Rule } from './types.ts';

export const SSRF_RULES: Rule[] = [
  { id: 934150, class: 'injection', description: 'prototype pollution in a key or parameter name (__proto__, constructor then prototype)', crs: '934130 (JavaScript prototype pollution, CRS 4)' },
  { id: 934160, class: 'injection', description: 'cloud metadata address as a URL host or a value, in any spelling (decimal, hex, octal, IPv4-mapped IPv6, wildcard DNS names, provider names)', crs: '934110 (SSRF: cloud metadata, CRS 4)' },
  { id: 934170, class: 'injection', description: 'loopback or private address as a URL host: in a disguised spelling (hex, decimal, octal, short, mapped) at level 1, any at level 2', crs: '934120 (SSRF: IP address in URL, CRS 4)' },
  { id: 934180, class: 'injection', description: 'out-of-band callback host of a public testing service (interactsh, oast.*, Burp Collaborator, oastify, dnslog, request bins, canary tokens) anywhere in a request, headers included', crs: '934110 (SSRF, CRS 4: same aim, a blind request forgery proving itself)' },
];
