// The small pages the edge answers itself. They name no customer but the one asked for.
const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><meta name="viewport" content="width=device-width"></head><body style="font-family:sans-serif;max-width:40em;margin:4em auto"><h1>${title}</h1><p>${text}</p><hr><p><small>palisade edge</small></p></body></html>\n`;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const PAGES = {
  unknown: (host: string) => page('Misdirected request', `This edge serves no site named <b>${escape(host)}</b>.`),
  disabled: (host: string) => page('Not configured', `<b>${escape(host)}</b> is not configured for protection on this service.`),
  notBound: (host: string) => page('Misdirected request', `<b>${escape(host)}</b> is served by other edge nodes.`),
  badGateway: (host: string) => page('Bad gateway', `The server behind <b>${escape(host)}</b> could not be reached. Please try again in a moment.`),
  gatewayTimeout: (host: string) => page('Gateway timeout', `The server behind <b>${escape(host)}</b> did not answer in time.`),
  status: (node: string, status: string) => page('Palisade edge', `This is edge node <b>${escape(node)}</b>; its status is <b>${escape(status)}</b>.`),
  requestTimeout: () => page('Request timeout', 'The request did not arrive in time.'),
  tooLarge: (max: number) => page('Request too large', `This service accepts request bodies of at most ${max} bytes.`),
  moved: () => page('Moved', 'This site is served over HTTPS.'),
  /** A body refused for what it is, not for an attack in it (413 past the limit, 415 its type or charset). */
  bodyRefused: (host: string, why: string, ref: string) =>
    page('Request body not accepted', `<b>${escape(host)}</b> did not accept this request's body: ${escape(why)}. Send a smaller body or another encoding, or tell the site's owner this reference: <code>${ref}</code>`),
  wafBlocked: (host: string, ref: string) =>
    page('Request blocked', `This request to <b>${escape(host)}</b> was blocked by its protection rules. If you think this is a mistake, tell the site's owner this reference: <code>${ref}</code>`),
  banned: (host: string, seconds: number, ref: string) =>
    page('Temporarily blocked', `Too many blocked requests came from your address; <b>${escape(host)}</b> will accept requests from it again in ${seconds} s. Reference: <code>${ref}</code>`),
  rateLimited: (host: string, ref: string) => page('Too many requests', `Your address sends requests to <b>${escape(host)}</b> faster than it accepts them. Reference: <code>${ref}</code>`),
  bodiesBusy: (host: string, ref: string) => page('Too many requests', `Your address is sending more request bodies to <b>${escape(host)}</b> at once than this service holds for one visitor; please wait for them to finish. Reference: <code>${ref}</code>`),
  edgeBusy: (host: string, ref: string) => page('Service busy', `This service is receiving more request bodies at once than it holds; please try <b>${escape(host)}</b> again in a moment. Reference: <code>${ref}</code>`),
  badRequest: () => page('Bad request', 'The request could not be read.'),
  challengeRejected: (host: string, reason: string, ref: string) =>
    page('Check failed', `The browser check for <b>${escape(host)}</b> did not pass (${escape(reason)}). <a href="/">Try again</a>. Reference: <code>${ref}</code>`),
  blockedAddress: (host: string, address: string, ref: string) =>
    page('Access denied', `The owner of <b>${escape(host)}</b> does not accept requests from your address (${escape(address)}). Reference: <code>${ref}</code>`),
  blockedCountry: (host: string, country: string, ref: string) =>
    page('Access denied', `The owner of <b>${escape(host)}</b> does not accept requests from your country (<b>${escape(country)}</b>). Reference: <code>${ref}</code>`),
};
