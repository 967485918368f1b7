// `sjschallenge` (challenge.ts): the verification URL, or a 503 (page for navigations, JSON
// otherwise) for a request without a valid clearance; a cleared request passes on.
import type { EdgeParts } from '../stage/parts.ts';
import type { WalkStage } from '../stage/stage.ts';
import { page, refuse, reply } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';
import { isNavigation, VERIFY_PATH } from './challenge.ts';
import { challengePage } from './challenge-page.ts';

export function challengeStage(parts: EdgeParts): WalkStage {
  const { challenges, metrics } = parts;
  return {
    // After the WAF's verdict on the body (docs/edge.md's order of checks: a request the WAF
    // refuses is refused as such, whatever its clearance); it reads nothing of the body itself.
    phase: 'body',
    name: 'JS challenge → 503',
    run(ctx) {
      // robots.txt exactly: with a query string it is whatever the backend makes of it.
      if (!ctx.domain.sjschallenge || ctx.url === '/robots.txt') return undefined;
      const { req, res, host, url, path, client, scheme } = ctx;
      const domain = ctx.domain.domain;
      if (path === VERIFY_PATH) {
        const query = new URLSearchParams(url.slice(url.indexOf('?') + 1));
        const verdict = challenges.verify(query.get('challenge') ?? '', query.get('nonce') ?? '', query.get('return') ?? '/', domain, client, scheme === 'https');
        if (!verdict.ok) {
          const refused = refuse(metrics, res, domain, 'challenge-rejected', (ref) => PAGES.challengeRejected(host, verdict.reason, ref));
          return { ...refused, via: verdict.reason };
        }
        metrics.blocked('challenge-passed');
        res.writeHead(302, { location: verdict.returnTo, 'set-cookie': verdict.cookie, 'cache-control': 'no-store', 'content-length': 0 });
        res.end();
        return { status: 302, domain, via: 'challenge-passed' };
      }
      if (challenges.cleared(req.headers.cookie, domain, client)) return undefined;
      metrics.blocked('challenge');
      if (isNavigation(req.method, req.headers)) {
        page(res, 503, challengePage(host, challenges.issue(domain, client), challenges.difficulty, VERIFY_PATH, url));
      } else {
        reply(res, 503, 'application/json', `${JSON.stringify({ error: 'challenge_required', detail: `open ${host} in a browser with JavaScript to pass its check` })}\n`);
      }
      return { status: 503, domain, blocked: 'challenge' };
    },
  };
}
