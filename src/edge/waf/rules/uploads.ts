// Upload rules: what body-parse.ts refuses in a multipart file (uploads.ts decides). Charsets a
// backend would decode past the rules are refused as protocol violations (415, rule 920480, CRS's
// own id) and are not listed here.
import type { Rule } from './types.ts';

export const UPLOAD_RULES: Rule[] = [
  { id: 933110, class: 'rce', description: 'upload of a file the server would run (.php and its variants, .phtml, .phar, .jsp, .asp(x), .cgi) or of a directory configuration (.htaccess, .user.ini, web.config), by its multipart file name or an X-File-Name header', crs: '933110 (PHP script file upload)' },
  { id: 933100, class: 'rce', description: 'server code (<?php, <%…) behind the magic number of a file skipped as binary (GIF89a;<?php …)', crs: '933100 (PHP open tag)' },
];
