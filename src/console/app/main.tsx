// The console's entry: sign-in, the frame (navigation, sign-out) and the page the route names.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { Problem, whenUnauthorized, whoIs, type Me } from './api.ts';
import { forgetKey, keepKey, storedKey } from './session.ts';
import { useRoute, type Route } from './router.ts';
import { TextField, ProblemNote, useAction, PageTitle } from './ui.tsx';
import { DomainsPage } from './pages/domains.tsx';
import { DomainPage } from './pages/domain.tsx';
import { IpListsPage } from './pages/iplists.tsx';
import { CertificatesPage } from './pages/certificates.tsx';
import { EventsPage } from './pages/events.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';

/** Signing out forgets the key and starts the page afresh, so nothing read with it stays in memory. */
function signOut(): void {
  forgetKey();
  location.replace(location.pathname);
}

/** What a wrong key at sign-in is told (the API's own words are about a request, not a person). */
const REFUSED = new Problem(401, 'UNAUTHORIZED', 'This API key was refused. Check that it was copied whole (no spaces), or ask your operator for a new one.');

function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [key, setKey] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const me = await action.run(() => whoIs(key.trim()));
    if (me) {
      keepKey(key.trim());
      onSignedIn(me);
    }
  };
  return (
    <main id="main" class="signin">
      <PageTitle>Sign in</PageTitle>
      <p>Sign in with one of your API keys. It is kept in this browser tab only, until you sign out or close the tab.</p>
      <form onSubmit={submit}>
        <TextField label="API key" name="key" type="password" value={key} onValue={setKey} required autocomplete="current-password" />
        <ProblemNote problem={action.problem?.status === 401 ? REFUSED : action.problem} />
        <button type="submit" disabled={action.busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'domains':
      return <DomainsPage />;
    case 'domain':
      return <DomainPage domain={route.domain} tab={route.tab} />;
    case 'iplists':
      return <IpListsPage />;
    case 'certificates':
      return <CertificatesPage />;
    case 'events':
      return <EventsPage />;
    case 'webhooks':
      return <WebhooksPage />;
    default:
      return (
        <>
          <PageTitle>Not found</PageTitle>
          <p>
            There is no page here. <a href="#/domains">Go to your domains</a>.
          </p>
        </>
      );
  }
}

const NAV: Array<[string, string, Route['page'][]]> = [
  ['#/domains', 'Domains', ['domains', 'domain']],
  ['#/iplists', 'IP lists', ['iplists']],
  ['#/certificates', 'Certificates', ['certificates']],
  ['#/events', 'Events', ['events']],
  ['#/webhooks', 'Webhooks', ['webhooks']],
];

function Console({ me }: { me: Me | null }) {
  const route = useRoute();
  // A new view: the focus goes to its heading, so a screen reader announces where the user is.
  useEffect(() => document.getElementById('page-title')?.focus(), [route.page]);
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('page-title')?.focus())}>
        Skip to content
      </a>
      <header>
        <span class="brand">Palisade</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([link, text, pages]) => (
              <li key={link}>
                <a href={link} aria-current={pages.includes(route.page) ? 'page' : undefined}>
                  {text}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="account">{me?.name ?? ''}</span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main">
        <Page route={route} />
      </main>
    </>
  );
}

function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [signedIn, setSignedIn] = useState(() => storedKey() !== null);
  const [unreachable, setUnreachable] = useState(false);
  useEffect(() => {
    // A revoked key signs the tab out at its next call (a 401, whoIs's included).
    whenUnauthorized(signOut);
    const key = storedKey();
    if (!key) return;
    // Asked beside the page's own first call, not before it (one round trip less to a usable
    // page). Any failure but a 401 (the service unreachable a moment) keeps the key: "Try again".
    whoIs(key).then(setMe, () => setUnreachable(true));
  }, []);
  if (unreachable)
    return (
      <main id="main" class="signin">
        <PageTitle>Palisade console</PageTitle>
        <p role="alert">The service did not answer. Check your connection and try again.</p>
        <div class="actions">
          <button type="button" onClick={() => location.reload()}>
            Try again
          </button>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </main>
    );
  if (!signedIn) return <SignIn onSignedIn={(who) => (setMe(who), setSignedIn(true))} />;
  return <Console me={me} />;
}

// A page brought back from the back/forward cache after sign-out must not show what it held.
addEventListener('pageshow', (event) => {
  if (event.persisted && !storedKey()) location.reload();
});

render(<App />, document.getElementById('app')!);
