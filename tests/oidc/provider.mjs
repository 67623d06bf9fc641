// A real OpenID Connect provider on loopback for the console's single sign-on tests
// (tests/api/console_oidc.rs): the certified `oidc-provider` package, pinned in package.json, with its
// development sign-in pages (any password; the login names the account below).
//
// It listens first, on 127.0.0.1 and a free port, and prints `port N`; it then reads one line from
// standard input, the redirect URI of the sitebot under test (whose port is known only once sitebot
// runs, with this issuer in its configuration), registers the client with it, and prints `ready`.
// It ends when standard input closes (the test ends or dies) or on SIGTERM.

import http from 'node:http';
import readline from 'node:readline';
import Provider from 'oidc-provider';

const CLIENT_ID = process.env.OIDC_CLIENT_ID || 'sitebot-console';
const CLIENT_SECRET = process.env.OIDC_CLIENT_SECRET || 'a-test-client-secret-of-some-length';

// The test's people: the login typed on the provider's sign-in page is the account id.
const ACCOUNTS = {
  admin: { email: 'ada.admin@corp.example', email_verified: true, groups: ['staff', 'sitebot-admins'] },
  editor: { email: 'Eddie.Editor@corp.example', email_verified: true, groups: ['staff'] },
  newcomer: { email: 'nina.new@corp.example', email_verified: true, groups: ['staff'] },
  outsider: { email: 'olga@elsewhere.example', email_verified: true, groups: ['sitebot-admins'] },
  unverified: { email: 'ursula@corp.example', email_verified: false, groups: ['sitebot-admins'] },
};

let callback = null;
const server = http.createServer((req, res) => {
  if (!callback) {
    res.writeHead(503, { 'content-type': 'text/plain' }).end('not ready');
    return;
  }
  callback(req, res);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  console.log(`port ${port}`);
  const lines = readline.createInterface({ input: process.stdin });
  let configured = false;
  lines.on('line', (line) => {
    if (configured) return;
    configured = true;
    const provider = new Provider(issuer, {
      clients: [{
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [line.trim()],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      }],
      scopes: ['openid', 'email', 'groups'],
      claims: { email: ['email', 'email_verified'], groups: ['groups'] },
      async findAccount(ctx, id) {
        const account = ACCOUNTS[id];
        if (!account) return undefined;
        return { accountId: id, async claims() { return { sub: id, ...account }; } };
      },
      pkce: { required: () => true },
      cookies: { keys: ['a test-only cookie signing key'] },
      features: { devInteractions: { enabled: true } },
    });
    callback = provider.callback();
    console.log('ready');
  });
  lines.on('close', () => server.close(() => process.exit(0)));
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
